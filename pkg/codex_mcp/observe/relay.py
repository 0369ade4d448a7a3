"""The gateway's relay seen from here: the child a relayed call went to, and its span
(hooks.RelayHooks; specs/observability.md, "Hooks")."""

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
