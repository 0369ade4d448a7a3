"""A server whose slow tool records whether the client cancelled it."""

import asyncio

from codex_mcp import Context, Server

server = Server("cancellable")
state = {"started": 0, "cancelled": 0}


@server.tool(read_only=True)
async def slow(seconds: float, ctx: Context) -> str:
    """Says it started (progress), then sleeps; records whether it was cancelled."""
    state["started"] += 1
    await ctx.report_progress(0, 1, message="started")
    try:
        await asyncio.sleep(seconds)
    except asyncio.CancelledError:
        state["cancelled"] += 1
        raise
    return "finished"


@server.tool(read_only=True)
def counters() -> dict[str, int]:
    return dict(state)
