"""A stdio child built on the official MCP Python SDK (PyPI `mcp`) whose tools use the
client inside their call the way the SDK's own examples do: `ctx.elicit`, the session's
`create_message` and `list_roots`, `ctx.info`. The SDK puts no progress token and no
related-request marker on these over stdio (its `related_request_id` only picks an HTTP
stream), so a gateway in front cannot tell from the wire which call they belong to.

`ask_later` starts background work that asks the client after its call has returned
(a question that belongs to no call)."""

from __future__ import annotations

import asyncio
import warnings
from typing import Any

from mcp.server import MCPServer
from mcp.server.mcpserver import Context
from mcp.types import SamplingMessage, TextContent
from pydantic import BaseModel

# The SDK deprecates sampling, roots and logging for 2026-07-28: this child speaks 2025-11-25.
warnings.simplefilter("ignore")
server = MCPServer("sdk-asker", version="0.0.1")
_background: set[asyncio.Task[Any]] = set()


class Name(BaseModel):
    name: str


@server.tool()
async def ask_name(ctx: Context, who: str = "") -> str:
    """Elicit a name from the client (`who` is put in the question)."""
    answer = await ctx.elicit(f"Your name, {who}?", Name)
    return f"{answer.action}:{answer.data.name if answer.data else ''}"


@server.tool()
async def sample(ctx: Context) -> str:
    """Ask the client's model for a word."""
    result = await ctx.session.create_message(
        messages=[SamplingMessage(role="user", content=TextContent(type="text", text="a word"))],
        max_tokens=10,
        related_request_id=ctx.request_id,
    )
    content = result.content
    return f"sampled:{content.text if isinstance(content, TextContent) else content}"


@server.tool()
async def roots(ctx: Context) -> str:
    """List the client's roots."""
    listed = await ctx.session.list_roots()
    return "roots:" + ",".join(str(root.uri) for root in listed.roots)


@server.tool()
async def log_and_echo(text: str, ctx: Context) -> str:
    """Log `text` at info to the client, then return it."""
    await ctx.info(f"log:{text}")
    return text


@server.tool()
async def hold(seconds: float) -> str:
    """Stay in flight for `seconds`."""
    await asyncio.sleep(seconds)
    return "held"


@server.tool()
async def ask_later(ctx: Context, who: str = "", delay: float = 0.3) -> str:
    """Return at once; `delay` seconds later, elicit from the client outside any call."""
    session = ctx.session

    async def later() -> None:
        await asyncio.sleep(delay)
        try:
            answer = await session.elicit_form(f"Background, {who}?", {"type": "object"})
            await session.send_log_message("info", f"background answered: {answer.action}")
        except Exception as error:  # refused: say so where a test can see it
            await session.send_log_message("info", f"background refused: {error}")

    task = asyncio.get_running_loop().create_task(later())
    _background.add(task)
    task.add_done_callback(_background.discard)
    return "scheduled"


if __name__ == "__main__":
    server.run("stdio")
