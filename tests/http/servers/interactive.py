"""A server whose tools talk back to the client: elicitation, sampling, logging, progress.

Served over HTTP by the SDK interop tests: `codex-mcp-http --serve tests/http/servers/interactive.py`.
"""

from __future__ import annotations

import asyncio
import logging

from codex_mcp import Context, Server

server = Server("interactive")
#: Set by `hang` when it starts, cleared when the client's cancellation reaches it.
hanging: dict[str, str] = {}


@server.tool()
async def ask_name(ctx: Context) -> str:
    """Elicits a name from the user and greets them."""
    answer = await ctx.elicit(
        "What is your name?",
        {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]},
    )
    if answer.get("action") != "accept":
        return f"no name ({answer.get('action')})"
    return f"hello {answer['content']['name']}"


@server.tool()
async def summarize(text: str, ctx: Context) -> str:
    """Asks the client's model to summarize the text."""
    result = await ctx.sample(f"Summarize: {text}", max_tokens=50)
    return f"model {result.get('model')} said {result['content']['text']}"


@server.tool(read_only=True)
async def chatty(tag: str, ctx: Context) -> str:
    """Logs at three levels, reports progress twice, then answers."""
    await ctx.debug(f"{tag} debug")
    await ctx.report_progress(1, 2, message=f"{tag} half")
    await ctx.info(f"{tag} info")
    await ctx.report_progress(2, 2, message=f"{tag} all")
    await ctx.warning(f"{tag} warning")
    return f"{tag} done"


@server.tool(read_only=True)
async def hang(ctx: Context) -> str:
    """Says it started (progress), then runs until cancelled; `cancelled` reports whether
    the cancellation arrived."""
    hanging["state"] = "running"
    await ctx.report_progress(0, 1, message="started")
    try:
        await asyncio.sleep(60)
    except asyncio.CancelledError:
        hanging["state"] = "cancelled"
        raise
    return "finished"


@server.tool(read_only=True)
async def cancelled() -> str:
    return hanging.get("state", "never started")


@server.tool(read_only=True)
async def log_line(text: str) -> str:
    """Writes `text` to the server's own Python log (what --log-file captures)."""
    logging.getLogger("interactive").warning("tool says: %s", text)
    return "logged"


@server.tool(read_only=True)
async def slow(seconds: float) -> str:
    """Says on the server's stderr that it started, then sleeps."""
    logging.getLogger("interactive").warning("slow call started")
    await asyncio.sleep(seconds)
    return f"slept {seconds:g} s"


@server.tool()
def fails(reason: str) -> str:
    """Raises at once: the server logs the failure and answers isError."""
    raise RuntimeError(reason)


@server.tool()
async def fails_later(reason: str) -> str:
    """Raises after a wait, in the call's own task."""
    await asyncio.sleep(0.01)
    raise RuntimeError(reason)
