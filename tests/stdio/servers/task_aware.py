"""Tools that rely on running inside their own asyncio task."""

import asyncio

from codex_mcp import Server

server = Server("task-aware")


@server.tool
async def bounded_wait(limit: float) -> str:
    """Wait far longer than `limit` under asyncio.timeout(limit)."""
    try:
        async with asyncio.timeout(limit):
            await asyncio.sleep(30)
    except TimeoutError:
        return "timed out"
    return "not timed out"


@server.tool
async def my_task(pause: float = 0.0) -> str:
    """Name this call's task (before and after a pause) without waiting first."""
    before = asyncio.current_task()
    if before is None:
        return "no task"
    await asyncio.sleep(pause)
    after = asyncio.current_task()
    assert before is after
    return str(id(before))
