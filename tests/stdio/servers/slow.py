"""A `slow` tool that says it started (a log notification), then sleeps."""

import asyncio

from codex_mcp import Context, Server

server = Server("slow")


@server.tool(read_only=True)
async def slow(seconds: float, ctx: Context) -> str:
    await ctx.info("slow call started")
    await asyncio.sleep(seconds)
    return f"slept {seconds:g} s"
