"""Every request a core serves, timed and told to the sinks, from one seam: each entry the
core dispatches by, wrapped once when it composes (`enable.Observed.request`, the core's
declared extension point; specs/observability.md, the seams)."""

from __future__ import annotations

import contextvars
import time
from collections.abc import Callable
from typing import Any, Protocol

from ..core.calls import MethodEntry
from ..core.deferred import Deferred
from ..core.errors import McpError
from ..core.jsonrpc import METHOD_NOT_FOUND
from ..core.provider import UnknownTool
from ..core.ready import Ready
from . import call_metrics
from .plain_metrics import OTHER

TOOLS_CALL = "tools/call"


class Call:
    """One request being served."""

    __slots__ = (
        "child", "error", "method", "params", "peer", "relay_span", "result", "span", "started", "tool",
    )  # fmt: skip

    def __init__(self, method: str, tool: str, peer: Any, params: Any) -> None:
        self.method = method
        self.tool = tool
        self.peer = peer
        self.params = params
        self.started = time.perf_counter()
        self.child: str | None = None  # the gateway child it was relayed to
        self.result: Any = None
        self.error: BaseException | None = None
        self.span: Any = None  # the tracer's span, when tracing
        self.relay_span: Any = None  # the span of its relay to a gateway child

    @property
    def failed(self) -> bool:
        return self.error is not None or _is_error(self.result)


def _is_error(result: Any) -> bool:
    """A tool result that reports a failure (isError)."""
    return type(result) is dict and result.get("isError") is True


def labels_of_failure(method: str, tool: str, error: BaseException | None) -> tuple[str, str]:
    """The metric labels of a request that failed with `error`: a tool the server does not
    have, or a method it does not serve, is counted as OTHER, not under the name the
    caller invented (any number of them, each of any length: specs/isolation.md)."""
    if isinstance(error, UnknownTool):
        return method, OTHER
    if isinstance(error, McpError) and error.code == METHOD_NOT_FOUND:
        return OTHER, OTHER
    return method, tool


class Sink(Protocol):
    def begin(self, call: Call) -> None: ...
    def end(self, call: Call, seconds: float) -> None: ...


#: The call being served in this context (set around the handler, so the gateway's relay
#: can name its child and carry the trace on).
CURRENT: contextvars.ContextVar[Call | None] = contextvars.ContextVar(
    "codex_mcp_call", default=None
)


class MetricsSink:
    """Requests, errors and latency by method and tool; calls in flight; per-child latency
    (call_metrics.py: plain numbers, written to the shared files under --workers)."""

    def __init__(self) -> None:
        self.calls = call_metrics.calls()
        self.count = 0  # in flight, for the status page

    def begin(self, call: Call | None = None) -> None:
        self.count += 1
        self.calls.started()

    def end(self, call: Call, seconds: float) -> None:
        method, tool = call.method, call.tool
        if call.error is not None:
            method, tool = labels_of_failure(method, tool, call.error)
        self.record(method, tool, seconds, call.failed, call.child)

    def record(
        self, method: str, tool: str, seconds: float, failed: bool, child: str | None = None
    ) -> None:
        """A request answered (begun with `begin`)."""
        self.count -= 1
        self.calls.answered(method, tool, seconds, failed, child)


class Recorder:
    """Starts and ends `Call`s for the sinks. With `calls_seen` False (no gateway relay or
    Codex turn reads the current call: no tracing, no gateway) and the metrics as the only
    sink, a request answered at once is counted without a `Call` or the context variable
    (the default HTTP server's hot path)."""

    def __init__(self, sinks: list[Sink], calls_seen: bool = True) -> None:
        self.sinks = sinks
        self.calls_seen = calls_seen
        only = sinks[0] if len(sinks) == 1 else None
        self.counting: MetricsSink | None = (
            only if isinstance(only, MetricsSink) and not calls_seen else None
        )

    def begin(self, method: str, peer: Any, params: Any) -> Call:
        tool = ""
        if method == TOOLS_CALL:
            name = params.get("name")
            tool = name if type(name) is str else ""
        call = Call(method, tool, peer, params)
        for sink in self.sinks:
            sink.begin(call)
        return call

    def end(self, call: Call, result: Any, error: BaseException | None) -> None:
        call.result, call.error = result, error
        seconds = time.perf_counter() - call.started
        for sink in self.sinks:
            sink.end(call, seconds)

    # -- wrapping the core's handlers ---------------------------------------------
    def entry(self, entry: MethodEntry, method: str | None) -> MethodEntry:
        """`entry` observed; `method` None: the entry serves many (read from the context)."""
        wrapped = self.handler(entry.handler, method, inline=entry.inline)
        return MethodEntry(wrapped, entry.inline, entry.context_class)

    def handler(
        self, handler: Callable[..., Any], method: str | None, *, inline: bool = False
    ) -> Callable[..., Any]:
        begin, end = self.begin, self.end

        if inline:
            assert method is not None

            def observed_inline(peer: Any, params: Any, ctx: Any) -> Any:
                call = begin(method, peer, params)
                try:
                    result = handler(peer, params, ctx)
                except BaseException as error:
                    end(call, None, error)
                    raise
                end(call, result, None)
                return result

            return observed_inline

        counting = self.counting
        if counting is not None:
            return self._counted(handler, method, counting)

        def observed(peer: Any, params: Any, ctx: Any) -> Any:
            call = begin(method or ctx.method, peer, params)
            token = CURRENT.set(call)
            try:
                work = handler(peer, params, ctx)
            except BaseException as error:
                end(call, None, error)
                raise
            finally:
                CURRENT.reset(token)
            kind = type(work)
            if kind is Ready:
                end(call, work.value, None)
                return work
            if isinstance(work, Deferred):
                return _answered_later(work, call, end)
            return _awaited(work, call, end)

        return observed

    def _counted(
        self, handler: Callable[..., Any], method: str | None, sink: MetricsSink
    ) -> Callable[..., Any]:
        """`handler` observed by the metrics alone: a request answered at once (inline,
        Ready, or raising) is recorded straight away; one that runs on gets its `Call`."""
        end = self.end
        begin = sink.begin
        count = sink.calls.counted
        perf_counter = time.perf_counter

        def counted(peer: Any, params: Any, ctx: Any) -> Any:
            started = perf_counter()
            name = method or ctx.method
            tool = ""
            if name == TOOLS_CALL:
                called = params.get("name")
                tool = called if type(called) is str else ""
            # Answered within this call (Ready, or raising): counted, never in flight, as
            # nothing that reads the calls in flight can run before it ends.
            try:
                work = handler(peer, params, ctx)
            except BaseException as error:
                count(*labels_of_failure(name, tool, error), perf_counter() - started, True)
                raise
            kind = type(work)
            if kind is Ready:
                value = work.value  # _is_error inlined: a Python call is ~0.1 us
                count(name, tool, perf_counter() - started, type(value) is dict and value.get("isError") is True)  # fmt: skip
                return work
            begin()  # in flight until its answer comes
            call = Call(name, tool, peer, params)
            call.started = started
            if kind is Deferred:
                return _answered_later(work, call, end)
            return _awaited(work, call, end)

        return counted


def _answered_later(inner: Deferred, call: Call, end: Callable[..., None]) -> Deferred:
    outer = Deferred()

    def settle(result: Any, error: BaseException | None) -> None:
        end(call, result, error)
        if error is None:
            outer.resolve(result)
        else:
            outer.reject(error)

    outer.on_cancel = inner.cancel
    inner.bind(settle)
    return outer


async def _awaited(work: Any, call: Call, end: Callable[..., None]) -> Any:
    CURRENT.set(call)  # this task's own context: the handler's later steps see it
    try:
        result = await work
    except BaseException as error:
        end(call, None, error)
        raise
    end(call, result, None)
    return result
