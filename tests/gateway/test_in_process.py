"""The gateway's routing, relay and child supervision in process: its children are library
servers reached in memory (`build_core(open_transport=...)`), its front is our client in
memory. No process is started, so these run in the inner loop; the same behaviour over real
children and real clients is shown by the slower tests beside these."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from codex_mcp import Context, Server
from codex_mcp.client import Client, MemoryTransport
from codex_mcp.codex_compat.client import codex_client_capabilities
from codex_mcp.core.jsonrpc import JsonObject
from codex_mcp.gateway.config.env import GatewayEnv
from codex_mcp.gateway.config.model import ServerConfig
from codex_mcp.gateway.config.parse import parse_document
from codex_mcp.gateway.serve import build_core


def _child(name: str, seen: list[JsonObject]) -> Server:
    server = Server(name, "1.0")

    @server.tool
    async def echo(message: str) -> str:
        """Say it back, with who said it."""
        return f"{name}: {message}"

    @server.tool
    async def ask(ctx: Context) -> str:
        """Ask the client a question."""
        seen.append(ctx.client_capabilities)
        answer = await ctx.elicit("name?", {"type": "object", "properties": {}})
        return f"{name} heard {answer['content']['name']}"

    @server.tool
    async def progress(ctx: Context) -> str:
        """Report progress twice."""
        await ctx.report_progress(1, 2)
        await ctx.report_progress(2, 2)
        return "done"

    @server.tool
    async def broken() -> str:
        """Always fails."""
        raise ValueError("this tool always fails")

    return server


@pytest.fixture
async def gateway(tmp_path: Path) -> AsyncIterator[tuple[Any, list[JsonObject]]]:
    seen: list[JsonObject] = []
    children = {name: _child(name, seen) for name in ("alpha", "beta")}
    document = {"mcpServers": {name: {"command": "never-run"} for name in children}}
    config = parse_document(document, "test")

    def in_memory(server: ServerConfig) -> MemoryTransport:
        return MemoryTransport(children[server.name])

    core = build_core(config, GatewayEnv(cache_dir=tmp_path), open_transport=in_memory)
    await core.start()
    try:
        yield core, seen
    finally:
        await core.aclose()


async def test_each_tool_is_named_for_its_child_and_routed_to_it(gateway: Any) -> None:
    core, _ = gateway
    async with Client.memory(core) as client:
        names = {tool.name for tool in await client.list_tools()}
        assert {"alpha__echo", "beta__echo", "gateway_status"} <= names
        assert (await client.call_tool("beta__echo", {"message": "hi"})).text == "beta: hi"
        assert (await client.call_tool("alpha__echo", {"message": "hi"})).text == "alpha: hi"
        status = (await client.call_tool("gateway_status")).structured_content or {}
    assert {s["name"]: s["state"] for s in status["servers"]} == {
        "alpha": "ready",
        "beta": "ready",
    }


async def test_a_childs_question_goes_to_the_client_of_the_call(gateway: Any) -> None:
    core, seen = gateway
    asked: list[JsonObject] = []

    def elicitation(params: JsonObject) -> JsonObject:
        asked.append(params)
        return {"action": "accept", "content": {"name": "Ada"}}

    async with Client.memory(core, elicitation_handler=elicitation) as client:
        result = await client.call_tool("alpha__ask")
    assert result.text == "alpha heard Ada"
    assert asked[0]["message"] == "name?"
    # A shared child is told what Codex declares, whatever the front client has.
    assert seen == [codex_client_capabilities()]


async def test_a_question_the_client_cannot_answer_fails_the_call_saying_so(
    gateway: Any,
) -> None:
    core, _ = gateway
    async with Client.memory(core, capabilities={}) as client:
        result = await client.call_tool("alpha__ask")
    assert result.is_error
    assert "does not support elicitation" in result.text


async def test_progress_comes_back_under_the_clients_token(gateway: Any) -> None:
    core, _ = gateway
    got: list[tuple[Any, Any]] = []
    async with Client.memory(core) as client:
        result = await client.call_tool(
            "beta__progress", on_progress=lambda p: got.append((p["progress"], p.get("total")))
        )
    assert result.text == "done"
    assert got == [(1, 2), (2, 2)]


async def test_a_childs_tool_error_reaches_the_client_as_its_result(gateway: Any) -> None:
    core, _ = gateway
    async with Client.memory(core) as client:
        result = await client.call_tool("alpha__broken")
    assert result.is_error
    assert "this tool always fails" in result.text
