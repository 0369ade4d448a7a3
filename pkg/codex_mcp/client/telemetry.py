"""Tool call telemetry: events to subscribers, and OpenTelemetry spans when the API is
installed (specs/client.md, "Telemetry")."""

from __future__ import annotations

import contextlib
import logging
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

log = logging.getLogger("codex_mcp.client.telemetry")

TOOL_CALL_START = "codex.mcp.tool_call.start"
TOOL_CALL_SUCCESS = "codex.mcp.tool_call.success"
TOOL_CALL_FAILURE = "codex.mcp.tool_call.failure"


@dataclass(frozen=True, slots=True)
class TelemetryEvent:
    name: str
    measurements: dict[str, Any] = field(default_factory=dict)
    metadata: dict[str, Any] = field(default_factory=dict)


Subscriber = Callable[[TelemetryEvent], object]


class Telemetry:
    """A tiny publish/subscribe hub. Clients use the module's `default` hub unless given one."""

    def __init__(self) -> None:
        self._subscribers: list[Subscriber] = []

    def subscribe(self, subscriber: Subscriber) -> Callable[[], None]:
        """Add a subscriber; returns a function that removes it."""
        self._subscribers.append(subscriber)

        def unsubscribe() -> None:
            if subscriber in self._subscribers:
                self._subscribers.remove(subscriber)

        return unsubscribe

    def emit(self, name: str, measurements: dict[str, Any], metadata: dict[str, Any]) -> None:
        if not self._subscribers:
            return
        event = TelemetryEvent(name, measurements, metadata)
        for subscriber in list(self._subscribers):
            try:
                subscriber(event)
            except Exception:
                log.exception("telemetry subscriber %r failed", subscriber)


default = Telemetry()
subscribe = default.subscribe


def now_ns() -> int:
    return time.time_ns()


try:  # OpenTelemetry is optional: spans when the API is importable, nothing otherwise.
    from opentelemetry import trace as _otel_trace

    _tracer: Any = _otel_trace.get_tracer("codex_mcp.client")
except ImportError:  # pragma: no cover - exercised only without the optional dependency
    _otel_trace = None  # type: ignore[assignment]
    _tracer = None


class _NoSpan:
    def set_attribute(self, key: str, value: Any) -> None:
        pass

    def record_exception(self, exc: BaseException) -> None:
        pass

    def set_status(self, *args: Any, **kwargs: Any) -> None:
        pass


@contextlib.contextmanager
def tool_span(tool: str, server_name: str | None) -> Iterator[Any]:
    """A client span for one tool call, named and attributed after the MCP semantic conventions."""
    if _tracer is None:
        yield _NoSpan()
        return
    with _tracer.start_as_current_span(
        f"tools/call {tool}",
        kind=_otel_trace.SpanKind.CLIENT,
        record_exception=False,
        set_status_on_exception=False,
    ) as span:
        span.set_attribute("mcp.method.name", "tools/call")
        span.set_attribute("gen_ai.tool.name", tool)
        span.set_attribute("gen_ai.operation.name", "execute_tool")
        if server_name:
            span.set_attribute("mcp.server.name", server_name)
        yield span


def mark_span_failed(span: Any, exc: BaseException) -> None:
    span.record_exception(exc)
    span.set_attribute("error.type", type(exc).__name__)
    if _otel_trace is not None and not isinstance(span, _NoSpan):
        span.set_status(_otel_trace.Status(_otel_trace.StatusCode.ERROR, str(exc)))
