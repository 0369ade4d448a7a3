"""JsonRpcPeer: one end of a JSON-RPC 2.0 connection, the same for servers and clients; the one
place JSON-RPC lives, with no MCP methods and no I/O (specs/design.md, "The peer")."""

from __future__ import annotations

import asyncio
import functools
import inspect
import logging
import sys
from collections.abc import Awaitable, Callable, Coroutine, Hashable
from typing import Any

import orjson

from . import jsonrpc
from .calls import (
    CANCELLED,
    DEFAULT_OPTIONS,
    PROGRESS,
    AnswerCallback,
    CallOptions,
    Claim,
    Handler,
    MethodEntry,
    MethodTable,
    Outbound,
    ProgressCallback,
)
from .deferred import Deferred
from .errors import McpError
from .inbound import Inbound
from .jsonrpc import (
    INTERNAL_ERROR,
    INVALID_PARAMS,
    INVALID_REQUEST,
    METHOD_NOT_FOUND,
    PARSE_ERROR,
    JsonObject,
    RequestId,
    error_response,
    is_valid_id,
    result_response,
)
from .outgoing import Requester
from .ready import Ready

log = logging.getLogger("codex_mcp.peer")

if sys.version_info >= (3, 12):

    def _start_task(work: Coroutine[Any, Any, None]) -> asyncio.Task[None]:
        """Run the request's first step now, inside its own task: a handler that never
        waits is answered without a trip through the event loop."""
        return asyncio.Task(work, loop=asyncio.get_running_loop(), eager_start=True)

else:  # 3.11 has no eager tasks; running the first step outside a task would break
    # asyncio.timeout() and current_task() in handlers, so every request gets a scheduled task.

    def _start_task(work: Coroutine[Any, Any, None]) -> asyncio.Task[None]:
        return asyncio.get_running_loop().create_task(work)


class _Batch:
    """Collects the answers to one batch and sends them as one array, tagged with the
    batch's origin; tells the transport when the batch ends with nothing to send."""

    __slots__ = ("origin", "peer", "pending", "responses")

    def __init__(self, peer: JsonRpcPeer, origin: Hashable | None, size: int) -> None:
        self.peer = peer
        self.origin = origin
        self.pending = size
        self.responses: list[JsonObject] = []

    def add(self, response: JsonObject | None) -> None:
        if response is not None:
            self.responses.append(response)
        self.pending -= 1
        if self.pending == 0:
            if self.responses:
                self.peer.send(self.responses, self.origin)
            else:
                self.peer.nothing_to_send(self.origin)


class JsonRpcPeer(Requester):
    """One end of a JSON-RPC connection. Subclasses set `methods` (and may override
    `fallback`, `handle_notification`, the error factories and `batch_refusal`).

    Guarantees: every incoming request with a usable id is answered exactly once unless
    the peer cancels it; notifications (and `"id": null` messages, which clients of the Go
    system send as notifications) are never answered; a malformed message costs at most its
    own answer;
    answers to our requests that cannot be read fail that request, never the reader.
    """

    #: Incoming methods; a method not here goes to `fallback`.
    methods: MethodTable = {}
    #: The context class built for each incoming request.
    context_class: type[Inbound] = Inbound
    #: Refuse messages without `"jsonrpc": "2.0"` (servers do; a client may take what a
    #: lenient server sends: Codex's app-server leaves the member out).
    strict_version = True
    #: Requests served by another entry than `methods` (a dual-era MCP server's
    #: per-request choice); it runs for every request, so it must not allocate.
    claim: Claim | None = None

    def __init__(self, outbound: Outbound) -> None:
        super().__init__()
        self.outbound = outbound
        self.closed = False
        self._in_flight: dict[RequestId, Inbound] = {}
        self._background: set[asyncio.Task[Any]] | None = None  # made on first use

    # -- input -----------------------------------------------------------------
    def receive_bytes(self, data: bytes | bytearray | memoryview, origin: Hashable = None) -> bool:
        """Decode one JSON text and handle it; malformed JSON gets a -32700 answer."""
        try:
            message = orjson.loads(data)  # jsonrpc.decode, inline: this runs per message
        except orjson.JSONDecodeError as exc:
            self.send(error_response(None, PARSE_ERROR, f"Parse error: {exc}"), origin)
            return True
        if type(message) is dict:  # one message, the usual case: `receive` without a layer
            return self._receive_one(message, None, origin)
        return self.receive(message, origin)

    def receive(self, message: Any, origin: Hashable = None) -> bool:
        """Handle one decoded JSON value: a message or a batch. `origin` is the transport's
        name for where it came from; answers that cannot be tied to a request id (to an
        invalid message, a batch) are sent with it. Returns whether anything will be sent
        in answer (a response tagged with the request's id, or an answer tagged `origin`)."""
        if type(message) is dict:
            return self._receive_one(message, None, origin)
        if type(message) is list:
            return self._receive_batch(message, origin)
        self.send(
            error_response(None, INVALID_REQUEST, "Invalid Request: not a JSON object"), origin
        )
        return True

    def _receive_batch(self, messages: list[Any], origin: Hashable) -> bool:
        refusal = "empty batch" if not messages else self.batch_refusal()
        if refusal is not None:
            self.send(error_response(None, INVALID_REQUEST, f"Invalid Request: {refusal}"), origin)
            return True
        batch = _Batch(self, origin, len(messages))
        answered = False
        for message in messages:
            if type(message) is dict:
                answered |= self._receive_one(message, batch, origin)
            else:
                answered = True
                batch.add(error_response(None, INVALID_REQUEST, "Invalid Request: not an object"))
        return answered

    def _receive_one(self, message: JsonObject, batch: _Batch | None, origin: Hashable) -> bool:
        """Returns whether an answer will be sent."""
        method = message.get("method")
        request_id: Any = message.get("id")
        has_id = request_id is not None  # the Go system's clients send "id": null notifications
        if method is None:
            if "id" in message and ("result" in message or "error" in message):
                self._on_response(message)
                return self._reply(None, None, batch)
            return self._reply(request_id, _invalid(request_id, "missing 'method'"), batch, origin)
        if message.get("jsonrpc") != "2.0" and self.strict_version:
            reply = _invalid(request_id, "'jsonrpc' must be \"2.0\"") if has_id else None
            return self._reply(request_id, reply, batch, origin)
        if type(method) is not str:
            return self._reply(
                request_id, _invalid(request_id, "'method' must be a string"), batch, origin
            )
        params = message.get("params")
        if not has_id:
            if params is None or type(params) is dict:
                self._on_notification(method, params or {}, origin)
            return self._reply(None, None, batch)
        kind = type(request_id)
        if kind is not int and kind is not str and not is_valid_id(request_id):
            return self._reply(
                None, _invalid(None, "'id' must be a string or an integer"), batch, origin
            )
        if params is None:
            params = {}
        elif type(params) is not dict:
            error = error_response(request_id, INVALID_PARAMS, "Invalid params: must be an object")
            return self._reply(request_id, error, batch)
        if request_id in self._in_flight:
            error = _invalid(request_id, f"request id {request_id!r} is already in flight")
            return self._reply(request_id, error, batch)
        self._start_request(request_id, method, params, batch, origin)
        return True

    def _start_request(
        self,
        request_id: RequestId,
        method: str,
        params: JsonObject,
        batch: _Batch | None,
        origin: Hashable,
    ) -> None:
        meta = params.get("_meta")
        entry: MethodEntry | None = None
        if type(meta) is dict:
            claim = self.claim
            if claim is not None:
                entry = claim(method, meta)
        else:
            meta = None
        if entry is None:
            entry = self.methods.get(method)
        if entry is not None and entry.inline:
            try:
                result = entry.handler(self, params, None)
            except McpError as exc:
                self._reply(request_id, self.error_response(request_id, exc), batch)
            except Exception as exc:
                log.error("unhandled error in %s", method, exc_info=exc, extra=self.log_extra)
                self._reply(request_id, _internal_error(request_id, exc), batch)
            else:
                self._reply(request_id, result_response(request_id, result), batch)
            return
        if entry is not None:
            handler = entry.handler
            context_class = entry.context_class or self.context_class
        else:
            handler = self.fallback
            context_class = self.context_class
        ctx = context_class(self, request_id, method, meta, origin, params)
        # A handler checks its params before returning its awaitable, so a bad call is
        # answered here without a task.
        try:
            work = handler(self, params, ctx)
        except McpError as exc:
            self._reply(request_id, self.error_response(request_id, exc), batch)
            return
        except Exception as exc:
            log.error("unhandled error in %s", method, exc_info=exc, extra=self.log_extra)
            self._reply(request_id, _internal_error(request_id, exc), batch)
            return
        if type(work) is Ready:  # answered without waiting: no task, like ping
            self._reply(request_id, result_response(request_id, work.value), batch)
            return
        self._in_flight[request_id] = ctx
        if isinstance(work, Deferred):  # answered when it is resolved: no task either
            ctx.task = work
            work.bind(functools.partial(self._answer_deferred, request_id, ctx, batch))
            return
        ctx.task = _start_task(self._run(request_id, work, ctx, batch))

    def _answer_deferred(
        self,
        request_id: RequestId,
        ctx: Inbound,
        batch: _Batch | None,
        result: Any,
        error: BaseException | None,
    ) -> None:
        """A Deferred was settled (once): answer its request as `_run` answers a task's."""
        # Settled, it has nothing left to cancel; and a Deferred that keeps its request's
        # context (a relayed call does) would otherwise make a cycle that holds its result,
        # a 50 MB answer for one, until the collector happens to run.
        ctx.task = None
        if self._in_flight.get(request_id) is not ctx:  # cancelled by the peer, or closed
            if batch is not None:
                batch.add(None)
            return
        del self._in_flight[request_id]
        if error is None:
            response = {"jsonrpc": "2.0", "id": request_id, "result": result}
            if batch is None:  # `_reply`, inline: a relay's every answer comes this way
                self.send(response, request_id)
            else:
                batch.add(response)
            return
        if isinstance(error, asyncio.CancelledError):  # the handler gave up on it
            response = _cancelled_by_handler(request_id)
        elif isinstance(error, McpError):
            response = _error_from(request_id, error)
        else:
            log.error("unhandled error in %s", ctx.method, exc_info=error, extra=self.log_extra)
            response = error_response(request_id, INTERNAL_ERROR, f"Internal error: {error}")
        self._reply(request_id, response, batch)

    async def _run(
        self, request_id: RequestId, work: Any, ctx: Inbound, batch: _Batch | None
    ) -> None:
        """Run one request and answer it, unless it was cancelled meanwhile. Answering from
        inside the task (not a done-callback) saves a loop turn per request."""
        response: JsonObject | None
        try:
            result = await work
        except asyncio.CancelledError:
            if self._in_flight.get(request_id) is ctx:
                # Nobody asked for this: the handler cancelled itself. Still answer once.
                del self._in_flight[request_id]
                self._reply(request_id, _cancelled_by_handler(request_id), batch)
                return
            if batch is not None:
                batch.add(None)  # cancelled by the peer: no answer, but the batch completes
            raise
        except McpError as exc:
            response = self.error_response(request_id, exc)
        except Exception as exc:
            log.error("unhandled error in %s", ctx.method, exc_info=exc, extra=self.log_extra)
            response = _internal_error(request_id, exc)
        else:
            response = result_response(request_id, result)
        if self._in_flight.get(request_id) is ctx:
            del self._in_flight[request_id]
        else:
            response = None  # cancelled by the peer (or the connection closed) after all
        self._reply(request_id, response, batch)

    def _reply(
        self,
        request_id: Any,
        response: JsonObject | None,
        batch: _Batch | None,
        origin: Hashable = None,
    ) -> bool:
        """Send (or collect) one answer; returns whether one goes out. Call sites pass
        `origin` for an answer to a message we do not run (an invalid one): it goes where the
        message came from, since the transport cannot know its id names a request; without
        an origin it is tagged with the id when usable."""
        if batch is not None:
            batch.add(response)
            return response is not None
        if response is None:
            return False
        if origin is None:
            origin = request_id if is_valid_id(request_id) else None
        self.send(response, origin)
        return True

    def _on_notification(self, method: str, params: JsonObject, origin: Hashable) -> None:
        if method == CANCELLED:
            self.cancel_request(params.get("requestId"), params.get("reason"))
        elif method == PROGRESS:
            self._on_progress(params)
        try:
            self.handle_notification(method, params, origin)
        except Exception:
            log.exception("handling notification %s failed", method, extra=self.log_extra)

    def cancel_request(self, request_id: Any, reason: Any = None) -> bool:
        """Stop an incoming request and suppress its answer. Unknown ids are ignored."""
        if not is_valid_id(request_id):
            return False
        ctx = self._in_flight.pop(request_id, None)
        if ctx is None:
            return False
        ctx.cancelled = True
        if ctx.task is not None:
            cancel(ctx.task, reason if isinstance(reason, str) else None)
        log.debug("request %r cancelled: %s", request_id, reason)
        return True

    def is_in_flight(self, request_id: Any) -> bool:
        return is_valid_id(request_id) and request_id in self._in_flight

    # -- output ----------------------------------------------------------------
    def send(self, message: JsonObject | list[JsonObject], related: Hashable = None) -> None:
        if self.closed:
            return
        sent = self.outbound.send(message, related)
        if sent is not None:
            self._spawn(sent, functools.partial(_undelivered, message))

    def nothing_to_send(self, origin: Hashable) -> None:
        """A batch ended without a single answer: a transport waiting on `origin` may stop."""
        finish = getattr(self.outbound, "nothing_to_send", None)
        if finish is not None and not self.closed:
            finish(origin)

    def notify(
        self, method: str, params: JsonObject | None = None, related: Hashable = None
    ) -> None:
        self.send(jsonrpc.notification(method, params), related)

    # -- hooks for the session above ----------------------------------------------
    def fallback(self, peer: Any, params: JsonObject, ctx: Inbound) -> Any:
        """Handles methods not in `methods`."""
        raise McpError(METHOD_NOT_FOUND, f"Method not found: {ctx.method}")

    def handle_notification(self, method: str, params: JsonObject, origin: Hashable) -> None:
        """Called with every notification, after cancellation and progress are applied."""

    def batch_refusal(self) -> str | None:
        """Why batches are refused now (the answer's message), or None to accept them."""
        return None

    def error_response(self, request_id: RequestId, exc: McpError) -> JsonObject:
        """The answer to a request whose handler raised `exc` (a transport that maps
        errors to statuses of its own may look at the exception here)."""
        return _error_from(request_id, exc)

    # -- lifetime --------------------------------------------------------------
    @property
    def in_flight(self) -> int:
        return len(self._in_flight)

    async def drain(self, timeout: float) -> None:
        """Let incoming requests finish (bounded), then cancel what is left."""
        waits: list[asyncio.Future[Any]] = []
        for ctx in self._in_flight.values():
            if isinstance(ctx.task, Deferred):
                waits.append(ctx.task.finished())
            elif ctx.task is not None:
                waits.append(ctx.task)
        if waits:
            _, pending = await asyncio.wait(waits, timeout=timeout)
            if pending:
                for ctx in list(self._in_flight.values()):
                    if ctx.task is not None:
                        cancel(ctx.task)
                await asyncio.wait(pending, timeout=1.0)

    def close(self, error: Exception | None = None) -> None:
        """Stop everything: incoming requests are cancelled (unanswered), our pending
        requests fail at once with `error` (default: `closed_error()`)."""
        if self.closed:
            return
        self.closed = True
        in_flight = list(self._in_flight.values())
        self._in_flight.clear()  # first: a Deferred settles at once, and must find none
        for ctx in in_flight:
            ctx.cancelled = True
            if ctx.task is not None:
                cancel(ctx.task)
        self._fail_pending(error or self.closed_error())
        for task in list(self._background or ()):
            task.cancel()

    def _spawn(
        self, work: Awaitable[Any], failed: Callable[[Exception], object] | None = None
    ) -> None:
        """Run `work` in the background, in a task of its own (no coroutine around it: one
        cancelled before it ran would leave `work` never awaited); `failed` gets what it
        raised."""
        task = asyncio.ensure_future(work)
        if self._background is None:
            self._background = set()
        self._background.add(task)
        task.add_done_callback(self._background.discard)
        if failed is not None:
            task.add_done_callback(functools.partial(_report_failure, failed))

    def _call_back(self, fn: Callable[..., object], *args: Any) -> None:
        """Run a user callback; an async one in the background; a failure is only logged."""
        try:
            result = fn(*args)
            if inspect.isawaitable(result):
                self._spawn(result, functools.partial(_callback_failed, fn, self.log_extra))
        except Exception:
            log.exception("callback %r failed", fn, extra=self.log_extra)


def cancel(task: asyncio.Task[Any] | Deferred, message: str | None = None) -> None:
    """Cancel a request's task (or Deferred). On 3.11 a task may not have taken its first
    step yet: cancelled then, the handler's coroutine it runs would be left never awaited
    (and Python says so), so it is cancelled right after that step, as on 3.12+, where a
    request's task takes its first step when it is made."""
    if isinstance(task, asyncio.Task):
        coro = task.get_coro()
        if inspect.iscoroutine(coro) and inspect.getcoroutinestate(coro) == inspect.CORO_CREATED:
            task.get_loop().call_soon(task.cancel, message)
            return
    task.cancel(message)


def _report_failure(failed: Callable[[Exception], object], task: asyncio.Future[Any]) -> None:
    if not task.cancelled() and isinstance(exc := task.exception(), Exception):
        failed(exc)


def _undelivered(message: Any, exc: Exception) -> None:
    """An answer or notification nobody waits on could not be written: logged."""
    what = message.get("method", "answer") if isinstance(message, dict) else "batch"
    log.debug("could not deliver %s: %s", what, exc)


def _callback_failed(fn: Any, extra: dict[str, str] | None, exc: Exception) -> None:
    log.error("callback %r failed", fn, exc_info=exc, extra=extra)


def _invalid(request_id: Any, detail: str) -> JsonObject:
    return error_response(
        request_id if is_valid_id(request_id) else None,
        INVALID_REQUEST,
        f"Invalid Request: {detail}",
    )


def _internal_error(request_id: RequestId, exc: Exception) -> JsonObject:
    return error_response(request_id, INTERNAL_ERROR, f"Internal error: {exc}")


def _cancelled_by_handler(request_id: RequestId) -> JsonObject:
    return error_response(request_id, INTERNAL_ERROR, "Internal error: the handler was cancelled")


def _error_from(request_id: RequestId, exc: McpError) -> JsonObject:
    return error_response(request_id, exc.code, exc.message, exc.data)


__all__ = [
    "DEFAULT_OPTIONS",
    "AnswerCallback",
    "CallOptions",
    "Claim",
    "Handler",
    "Inbound",
    "JsonRpcPeer",
    "MethodEntry",
    "MethodTable",
    "Outbound",
    "ProgressCallback",
]
