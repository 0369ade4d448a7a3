"""Tools that rely on running inside their own asyncio task."""

import asyncio
import contextvars

from codex_mcp import Server, ToolError

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


request_tag: contextvars.ContextVar[str] = contextvars.ContextVar("request_tag", default="unset")


@server.tool
async def tag_once(tag: str) -> str:
    """Never waits, so it is answered inline: it must still not leak context to other calls."""
    previous = request_tag.get()
    request_tag.set(tag)
    return previous


@server.tool
async def fail_at_once(kind: str) -> str:
    """Never waits; fails the way it is told."""
    if kind == "tool":
        raise ToolError("refused on purpose")
    raise ValueError("broken on purpose")
