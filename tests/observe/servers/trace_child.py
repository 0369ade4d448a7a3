"""A gateway child that says which trace context its call arrived with."""

from __future__ import annotations

from codex_mcp import Context, Server

server = Server("kid")


@server.tool(read_only=True)
def seen_trace(ctx: Context) -> str:
    """The `_meta.traceparent` of this call ("none" without one)."""
    return str((ctx.meta or {}).get("traceparent", "none"))
