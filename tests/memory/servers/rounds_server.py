"""The tools the memory rounds tests call, one per kind of call the hostile-input list
names (plain, streamed, failed; cancelled and cut through `waits`), each answering about
4 KB: `codex-mcp-http --serve tests/memory/servers/rounds_server.py`."""

from __future__ import annotations

import asyncio

from codex_mcp import Context, Server, ToolError

#: What every answer carries: 4 KB of text (a call's result, or a failure's message).
ANSWER = "x" * 4096

server = Server("memory-rounds")


@server.tool
async def plain(n: int) -> str:
    """Answer at once: a plain JSON answer."""
    return f"{n} {ANSWER}"


@server.tool
async def streamed(n: int, ctx: Context) -> str:
    """Report progress, then answer: the answer turns into an SSE stream."""
    await ctx.report_progress(1, 2)
    await asyncio.sleep(0)
    await ctx.report_progress(2, 2)
    return f"{n} {ANSWER}"


@server.tool
async def failed(n: int, ctx: Context) -> str:
    """Report progress, then fail: a streamed error result."""
    await ctx.report_progress(1, 1)
    raise ToolError(f"{n} failed on purpose {ANSWER}")


#: The calls of `waits` waiting for their `release`, by token.
_waiting: dict[str, asyncio.Event] = {}


@server.tool
async def waits(token: str, ctx: Context) -> str:
    """Report progress, then wait until `release(token)` (or a cancellation), then answer:
    a client cancels it, or hangs up on it and releases it, so its end comes after that."""
    released = _waiting.setdefault(token, asyncio.Event())
    try:
        await ctx.report_progress(1, None)
        await released.wait()
    finally:
        _waiting.pop(token, None)
    return f"{token} {ANSWER}"


@server.tool
async def release(token: str) -> bool:
    """Let the `waits` call of this token answer; False if none waits."""
    released = _waiting.get(token)
    if released is not None:
        released.set()
    return released is not None
