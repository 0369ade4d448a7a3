"""A server whose `block` tool says it started, then waits until the end of the process.

    codex-mcp --serve tests/client/servers/blocking.py

The start is a progress notification (the client must pass a progress callback), so a
test knows the call is really pending on the server before it acts.
"""

import asyncio

from codex_mcp import Context, Server

server = Server("blocking")


@server.tool(read_only=True)
async def block(tag: str, ctx: Context) -> str:
    await ctx.report_progress(0, 1, message=f"started {tag}")
    await asyncio.Event().wait()
    return "never"
