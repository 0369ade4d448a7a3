"""The server the replica tests run on several processes: every tool says which process
served it, and the tools make the traffic the tests follow across replicas."""

from __future__ import annotations

import asyncio
import logging
import os
import time

from codex_mcp import Context, Server

server = Server("shared")
PID = str(os.getpid())


@server.tool(read_only=True)
def whoami() -> str:
    return PID


@server.tool(read_only=True)
async def echo(message: str) -> str:
    return message


@server.tool(read_only=True)
async def steps(count: int, ctx: Context, tag: str = "") -> str:
    """One progress notification per step, then the pid."""
    for step in range(1, count + 1):
        await ctx.report_progress(step, count, message=f"{tag}:{step}")
        await asyncio.sleep(0.01)
    return PID


@server.tool(read_only=True)
async def emit(count: int, tag: str, ctx: Context) -> str:
    """`count` log messages tagged `tag-1`..`tag-count` (on the GET stream when the call
    is answered with JSON)."""
    for index in range(1, count + 1):
        await ctx.info(f"{tag}-{index}")
    return PID


@server.tool()
async def ask(ctx: Context) -> str:
    answer = await ctx.elicit(
        "Your name?",
        {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]},
    )
    return f"hello {answer.get('content', {}).get('name')} from {PID}"


@server.tool()
async def ask_across(ctx: Context) -> str:
    """Asks a name; says which process asked (kept in the requestState) and which one got
    the answer."""
    asked_by = await ctx.once("asked_by", os.getpid)
    answer = await ctx.elicit(
        "Your name?", {"type": "object", "properties": {"name": {"type": "string"}}}, key="name"
    )
    return f"{answer['content']['name']} asked by {asked_by}, answered to {PID}"


@server.tool()
async def touch(uri: str) -> str:
    """Says the resource changed (subscribers get notifications/resources/updated)."""
    server.notify_resource_updated(uri)
    return PID


@server.tool()
def touch_sync(uri: str) -> str:
    """`touch` from a sync tool: it runs in a worker thread, away from the event loop."""
    server.notify_resource_updated(uri)
    return PID


@server.tool(read_only=True)
async def slow(seconds: float) -> str:
    logging.getLogger("shared").warning("slow call started in %s", PID)
    await asyncio.sleep(seconds)
    return PID


@server.resource("note://{name}")
def note(name: str) -> str:
    """A note."""
    return f"note {name}"


@server.tool(task="optional")
async def job(seconds: float) -> str:
    """A task-capable call: waits, then says where it ran."""
    await asyncio.sleep(seconds)
    return f"job done in {PID}"


@server.tool(task="optional")
async def confirm_job(ctx: Context) -> str:
    """A task that asks a question once it is running."""
    await asyncio.sleep(0.1)
    answer = await ctx.elicit(
        "Go on?", {"type": "object", "properties": {"ok": {"type": "boolean"}}}, key="go"
    )
    return f"confirmed {answer.get('content', {}).get('ok')} in {PID}"


@server.tool()
def record(tag: str, wait_for: str = "") -> str:
    """Appends `tag` and this process's pid to the file CODEX_MCP_TEST_RUNS names: each run
    of the tool leaves a line (the tests' witness that nothing ran twice). With `wait_for`,
    then waits (up to 60 s) until that file exists: a call the test holds in flight."""
    with open(os.environ["CODEX_MCP_TEST_RUNS"], "a", encoding="utf-8") as runs:
        runs.write(f"{tag} {PID}\n")
    deadline = time.monotonic() + 60
    while wait_for and not os.path.exists(wait_for) and time.monotonic() < deadline:
        time.sleep(0.05)  # a sync tool: its own thread
    return tag
