"""A server whose slow tool records whether the client cancelled it."""

import asyncio

from codex_mcp import Server

server = Server("cancellable")
state = {"started": 0, "cancelled": 0}


@server.tool(read_only=True)
async def slow(seconds: float) -> str:
    state["started"] += 1
    try:
        await asyncio.sleep(seconds)
    except asyncio.CancelledError:
        state["cancelled"] += 1
        raise
    return "finished"


@server.tool(read_only=True)
def counters() -> dict[str, int]:
    return dict(state)
