"""The tools `codex-mcp` serves by default, so a newcomer has something to call."""

from __future__ import annotations

import asyncio
import os

from .core.context import RequestContext
from .server import Server


def build_server() -> Server:
    server = Server(
        "codex-mcp",
        title="codex-mcp built-in tools",
        instructions="Built-in tools of codex-mcp: echo a message, or wait a while.",
    )

    @server.tool(read_only=True, idempotent=True, open_world=False)
    async def echo(message: str) -> str:
        """Echo the message back unchanged."""
        return message

    @server.tool(read_only=True, idempotent=True, open_world=False)
    async def sleep(seconds: float, ctx: RequestContext) -> str:
        """Wait for the given number of seconds (at most 600), reporting progress each second."""
        seconds = max(0.0, min(seconds, 600.0))
        waited = 0.0
        while waited < seconds:
            step = min(1.0, seconds - waited)
            await asyncio.sleep(step)
            waited += step
            await ctx.report_progress(waited, seconds)
        return f"slept {seconds:g} s"

    _add_bench_tools(server, int(os.environ.get("CODEX_MCP_BENCH_TOOLS", "0") or 0))
    return server


def _add_bench_tools(server: Server, count: int) -> None:
    """Opt-in (CODEX_MCP_BENCH_TOOLS=N) extra tools so benchmarks can list many tools and
    fetch large results; never on by default."""
    if count <= 0:
        return

    @server.tool(read_only=True)
    async def blob(size: int) -> str:
        """Return `size` bytes of text."""
        return "x" * max(0, min(size, 64 * 1024 * 1024))

    for index in range(count):

        async def numbered(message: str) -> str:
            return message

        server.add_tool(
            numbered,
            name=f"tool_{index:04d}",
            description=f"Benchmark tool {index}",
            read_only=True,
        )
