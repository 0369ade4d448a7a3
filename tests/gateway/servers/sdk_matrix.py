"""The official Python SDK's server (mcp 2.3) with every capability the matrix exercises
(tests/gateway/matrix): sdk_everything.py's two tools, and text, structured, progress,
logging, elicitation, sampling, roots, a slow tool to cancel, prompts, completion, resources
and a template. It speaks the revision its client opens with, over stdio or Streamable HTTP:

    python sdk_matrix.py                        # stdio
    python sdk_matrix.py streamable-http PORT   # http://127.0.0.1:PORT/mcp
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import Any

import mcp_types as types
from mcp.server.mcpserver import Context
from pydantic import BaseModel

sys.path.insert(0, str(Path(__file__).parent))
from sdk_everything import server


class Weather(BaseModel):
    city: str
    temperature: int


class Name(BaseModel):
    username: str


@server.tool()
def weather(city: str) -> Weather:
    """Structured content, with its output schema."""
    return Weather(city=city, temperature=21)


@server.tool()
def add(a: int, b: int) -> int:
    """Add two integers (the tool the matrix's policies hide)."""
    return a + b


@server.tool()
async def with_progress(ctx: Context[Any, Any]) -> str:
    """Two progress notifications, then done."""
    await ctx.report_progress(1, 2)
    await ctx.report_progress(2, 2)
    return "progressed"


@server.tool()
async def with_logging(ctx: Context[Any, Any]) -> str:
    """A debug and an info line, then done."""
    await ctx.debug("sdk debug line")
    await ctx.info("sdk info line")
    return "logged"


@server.tool()
async def ask_name(ctx: Context[Any, Any]) -> str:
    """Elicits a user name."""
    answer = await ctx.elicit("Who are you?", Name)
    return f"{answer.action}: {getattr(answer, 'data', None)}"


@server.tool()
async def sample(prompt: str, ctx: Context[Any, Any]) -> str:
    """Asks the client's model."""
    result = await ctx.session.create_message(
        messages=[
            types.SamplingMessage(role="user", content=types.TextContent(type="text", text=prompt))
        ],
        max_tokens=10,
        related_request_id=ctx.request_id,
    )
    content = result.content
    return f"sampled: {getattr(content, 'text', content)}"


@server.tool()
async def roots(ctx: Context[Any, Any]) -> str:
    """The client's roots."""
    listed = await ctx.session.list_roots()
    return ", ".join(str(root.uri) for root in listed.roots)


@server.tool()
async def slow(seconds: float) -> str:
    """Sleeps (the call the matrix cancels)."""
    await asyncio.sleep(seconds)
    return f"slept {seconds}"


@server.resource("sdk://greeting", mime_type="text/plain")
def greeting() -> str:
    return "hello from the sdk"


@server.resource("sdk://secret", mime_type="text/plain")
def secret() -> str:
    """The resource the matrix's policies hide."""
    return "a secret"


@server.resource("sdk://items/{item}", mime_type="text/plain")
def item(item: str) -> str:
    return f"item {item}"


@server.prompt()
def summarize(text: str) -> str:
    return f"Summarize: {text}"


@server.prompt()
def hidden_prompt() -> str:
    """The prompt the matrix's policies hide."""
    return "hidden"


@server.completion()
async def complete(ref: Any, argument: Any, _context: Any) -> types.Completion | None:
    if argument.name == "text":
        words = ["alpha", "alpine", "beta"]
        return types.Completion(values=[w for w in words if w.startswith(argument.value)])
    return None


if __name__ == "__main__":
    if sys.argv[1:2] == ["streamable-http"]:
        server.run("streamable-http", host="127.0.0.1", port=int(sys.argv[2]))
    else:
        server.run()
