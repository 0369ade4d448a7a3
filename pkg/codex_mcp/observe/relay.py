"""The gateway's relay seen from here: a relayed call names its child (for per-child
latency and the audit log), and, when tracing, gets a span of its own whose context goes
to the child in `_meta.traceparent`. The gateway calls `on_relay` (hooks.RelayHooks)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .dispatch import CURRENT

if TYPE_CHECKING:
    from .tracing import TracingSink


class RelayWatch:
    def __init__(self, tracing: TracingSink | None) -> None:
        self.tracing = tracing

    def on_relay(self, child: str, tool: str, ctx: Any) -> None:
        call = CURRENT.get()
        if call is not None:
            call.child = child
            if self.tracing is not None:
                self.tracing.relayed(call, child, tool, ctx)
