"""Every kind of 2026-07-28 result our server library produces, for the real Codex to parse:
discover and lists carrying cache hints (ttlMs, cacheScope), a plain call, a call that asks
the user inside it (an input-required round), a tool that answers with a task when the
client allows one, and a tool whose call adds a tool (`list_changed`)."""

from __future__ import annotations

import asyncio
from typing import Any

from codex_mcp import Context, Server

server = Server("codex-kinds", cache_ttl_ms=60_000, cache_scope="public")

_NAME = {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}


@server.tool(read_only=True)
def echo(message: str) -> str:
    """Echo a message back."""
    return f"echo: {message}"


@server.tool(read_only=True)
async def ask_name(ctx: Context) -> str:
    """Asks the user's name inside the call, then says what the answer was."""
    answer: dict[str, Any] = await ctx.elicit("What is your name?", _NAME, key="user_name")
    return f"asked: action={answer.get('action')} content={answer.get('content')}"


@server.tool(read_only=True, task="optional")
async def slow_report(seconds: float) -> str:
    """Sleeps `seconds` (at most 5), then reports; a task when the client allows one."""
    await asyncio.sleep(max(0.0, min(seconds, 5.0)))
    return f"reported after {seconds:g} s"


_added: list[str] = []


@server.tool(read_only=True)
def grow(ctx: Context) -> str:
    """Adds a tool named added_<n> (the tool list changes), and names it."""
    name = f"added_{len(_added) + 1}"
    _added.append(name)

    def added() -> str:
        return f"{name} answers"

    server.add_tool(added, name=name, read_only=True, description=f"Added by call {len(_added)}.")
    return f"grew {name}"
