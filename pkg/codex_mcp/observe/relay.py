"""The gateway's relay seen from here: a relayed call names its child (for per-child
latency and the audit log), and, when tracing, gets a span of its own whose context goes
to the child in `_meta.traceparent`. Hooked once, by wrapping `relay.call_tool`."""

from __future__ import annotations

from typing import Any

from .dispatch import CURRENT

_HOOKED = "_codex_mcp_observed"

#: The tracing sink (tracing.py) when tracing: it spans each relayed call.
tracing: Any = None


def watch_relay(tracing_sink: Any = None) -> None:
    global tracing
    if tracing_sink is not None:
        tracing = tracing_sink
    from ..gateway import relay

    original = relay.call_tool
    if getattr(original, _HOOKED, False):
        return

    def call_tool(child: Any, tool: str, arguments: Any, ctx: Any, passthrough: bool) -> Any:
        call = CURRENT.get()
        if call is not None:
            call.child = child.name
            if tracing is not None:
                tracing.relayed(call, child.name, tool, ctx)
        return original(child, tool, arguments, ctx, passthrough)

    setattr(call_tool, _HOOKED, True)
    relay.call_tool = call_tool
