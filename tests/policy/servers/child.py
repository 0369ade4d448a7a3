"""A small server for the policy tests: tools (one with a name that differs only in case
from another's), resources and prompts, each answering who it is."""

from __future__ import annotations

from codex_mcp import Server

server = Server("policy-child")


@server.tool(read_only=True)
def get_time() -> str:
    return "called get_time"


@server.tool()
def rm(path: str = "/") -> str:
    return "called rm"


@server.tool()
def admin_reset() -> str:
    return "called admin_reset"


@server.tool(read_only=True)
def echo(message: str = "") -> str:
    return "called echo"


@server.tool(task="optional")
async def job(seconds: float = 0.3) -> str:
    """Long enough to become a task for a caller with the tasks extension."""
    import asyncio

    await asyncio.sleep(seconds)
    return "called job"


@server.tool(task="optional")
async def report(seconds: float = 0.5) -> str:
    """Like job, but no policy here hides it: shows that a call of it becomes a task."""
    import asyncio

    await asyncio.sleep(seconds)
    return "called report"


@server.resource("mem://open", name="open")
def open_note() -> str:
    return "open note"


@server.resource("mem://secret", name="secret")
def secret_note() -> str:
    return "secret note"


@server.prompt()
def greet() -> str:
    return "hello"


@server.prompt()
def secret_prompt() -> str:
    return "the secret prompt"


if __name__ == "__main__":
    server.run()
