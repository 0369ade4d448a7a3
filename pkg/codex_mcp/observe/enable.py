"""Turning observation on for a core, once, from the options (both servers): an extension
of the core (core/extensions.py) that wraps every entry it dispatches by and hears its
sessions open and end."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..core.calls import MethodEntry
from ..core.extensions import Extension
from ..core.jsonrpc import JsonObject
from . import tracing
from .dispatch import CURRENT, MetricsSink, Recorder, Sink
from .hooks import CodexTurnHooks, RelayHooks
from .sessions import SessionCounts
from .state import ServerState

if TYPE_CHECKING:
    from ..core.server import ServerCore
    from ..core.session import ServerSession
    from .audit import AuditLog
    from .tracing import TracingSink


class RelayWatch:
    """The gateway's relay seen from here (hooks.RelayHooks): the child a relayed call
    went to, and, when tracing, its span."""

    def __init__(self, tracing: TracingSink | None) -> None:
        self.tracing = tracing

    def on_relay(self, child: str, tool: str, ctx: Any) -> None:
        call = CURRENT.get()
        if call is not None:
            call.child = child
            if self.tracing is not None:
                self.tracing.relayed(call, child, tool, ctx)


class CodexTurnSpans:
    """A Codex turn seen from here (hooks.CodexTurnHooks): a `codex turn` span under the
    request's span."""

    def __init__(self, tracing: TracingSink) -> None:
        self.tracing = tracing

    async def on_codex_turn(
        self, tool: str, call_next: Callable[[], Awaitable[JsonObject]]
    ) -> JsonObject:
        call = CURRENT.get()
        if call is None or call.span is None:
            return await call_next()
        with self.tracing.child_span(call, "codex turn", {"codex.tool": tool}) as span:
            result = await call_next()
            structured = result.get("structuredContent") if isinstance(result, dict) else None
            if isinstance(structured, dict) and structured.get("threadId"):
                span.set_attribute("codex.thread_id", str(structured["threadId"]))
            return result


class Observed(Extension):
    """What is observing one core: its sinks, session counts and state."""

    def __init__(
        self, core: ServerCore, *, metrics: bool, audit_log: Path | None, audit_arguments: bool
    ) -> None:
        sinks: list[Sink] = []
        self.metrics: MetricsSink | None = None
        self.sessions: SessionCounts | None = None
        self.audit: AuditLog | None = None
        if metrics:
            self.metrics = MetricsSink()
            sinks.append(self.metrics)
            self.sessions = SessionCounts()
        if audit_log is not None:
            from .audit import AuditLog

            self.audit = AuditLog(audit_log, audit_arguments)
            sinks.append(self.audit)
        self.tracing: TracingSink | None = None
        tracer = tracing.tracer()
        if tracer is not None:
            from .tracing import TracingSink

            self.tracing = TracingSink(tracer)
            sinks.append(self.tracing)
        provider = core.provider
        relays = isinstance(provider, RelayHooks)
        # The gateway's relay and the tracer's spans read the call being served.
        calls_seen = relays or self.tracing is not None
        self.recorder: Recorder | None = Recorder(sinks, calls_seen) if sinks else None
        if isinstance(provider, RelayHooks):
            provider.relay_observer = RelayWatch(self.tracing)
        if self.tracing is not None and isinstance(provider, CodexTurnHooks):
            provider.turn_observer = CodexTurnSpans(self.tracing)
        self.state = ServerState(core, in_flight=self.metrics)

    # -- what it contributes to the core ---------------------------------------------------
    def request(self, method: str | None, entry: MethodEntry) -> MethodEntry:
        return self.recorder.entry(entry, method) if self.recorder is not None else entry

    def session_opened(self, session: ServerSession) -> None:
        if self.sessions is not None:
            self.sessions.session_opened()

    def session_ended(self, session: ServerSession) -> None:
        if self.sessions is not None:
            self.sessions.session_ended()

    def stateless_opened(self) -> None:
        if self.sessions is not None:
            self.sessions.stateless_opened()


def observe(
    core: ServerCore, *, metrics: bool, audit_log: Path | None = None, audit_arguments: bool = False
) -> Observed | None:
    """Observe `core` as asked (None when nothing is asked); a core already observed keeps
    its first observer (a test app made twice over one core must not count twice)."""
    existing = core.extension(Observed)
    if existing is not None:
        return existing
    if not metrics and audit_log is None and not tracing.requested():
        return None
    observed = Observed(core, metrics=metrics, audit_log=audit_log, audit_arguments=audit_arguments)
    core.extend(observed)
    return observed
