"""The official MCP SDK client on the gateway with real children aggregated, over stdio and
over HTTP (`codex-mcp-http`): listing, calls to each kind of child, a relayed elicitation
and progress, and a normalized error."""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import ClientSession, types
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError

from .gateway_helpers import (
    BROKEN,
    CMD_MCP,
    EVERYTHING,
    EXAMPLES,
    TIME,
    gateway_env,
    launch_http_gateway,
    stdio,
    stop,
    write_config,
)

pytestmark = pytest.mark.interop


def _config(tmp_path: Path, per_session: bool = False) -> Path:
    # Over HTTP `examples` asks for elicitation mid-call through a stdio pipe, which cannot
    # say which session's call it is for: a shared child's would be refused, so it is
    # per-session, as specs/gateway.md tells users to make such a server.
    servers: dict[str, Any] = {
        "examples": stdio(EXAMPLES, per_session=per_session),
        "brk": stdio(BROKEN, "--tools", "echo,fail,snake_case"),
    }
    if TIME.exists():
        servers["time"] = stdio(TIME)
    if EVERYTHING.exists():
        servers["everything"] = stdio(EVERYTHING)
    return write_config(tmp_path, servers)


@asynccontextmanager
async def sdk_session(
    transport: str, config: Path, **callbacks: Any
) -> AsyncIterator[ClientSession]:
    if transport == "stdio":
        params = StdioServerParameters(
            command=sys.executable, args=[CMD_MCP], env=gateway_env(config)
        )
        async with (
            stdio_client(params) as (read, write),
            ClientSession(read, write, **callbacks) as session,
        ):
            with anyio.fail_after(30):
                await session.initialize()
            yield session
        return
    process, url = launch_http_gateway(config)
    try:
        async with (
            streamable_http_client(url) as streams,
            ClientSession(streams[0], streams[1], **callbacks) as session,
        ):
            with anyio.fail_after(30):
                await session.initialize()
            yield session
    finally:
        stop(process)


@pytest.mark.parametrize("transport", ["stdio", "http"])
async def test_the_sdk_client_through_the_gateway(transport: str, tmp_path: Path) -> None:
    async def elicit(context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        return types.ElicitResult(action="accept", content={"username": "sdk", "email": "s@d.k"})

    progress: list[float] = []

    async def on_progress(value: float, total: float | None, message: str | None) -> None:
        progress.append(value)

    config = _config(tmp_path, per_session=transport == "http")
    async with sdk_session(transport, config, elicitation_callback=elicit) as session:
        tools = {tool.name: tool for tool in (await session.list_tools()).tools}
        assert {"examples__add", "brk__echo", "brk__snake_case", "gateway_status"} <= set(tools)
        assert tools["brk__snake_case"].input_schema["type"] == "object"
        added = await session.call_tool("examples__add", {"a": 40, "b": 2})
        assert added.structured_content == {"result": 42}
        echoed = await session.call_tool("brk__echo", {"message": "sdk"})
        assert echoed.content[0].text == "sdk"  # type: ignore[union-attr]
        snake = await session.call_tool("brk__snake_case", {})
        assert snake.structured_content == {"snake": True}
        elicited = await session.call_tool("examples__test_elicitation", {"message": "who?"})
        assert "sdk" in elicited.content[0].text  # type: ignore[union-attr]
        await session.call_tool(
            "examples__test_tool_with_progress", {}, progress_callback=on_progress
        )
        assert progress == [0, 50, 100]
        with pytest.raises(MCPError) as caught:
            await session.call_tool("brk__fail", {"code": -32603, "message": "db locked"})
        assert str(caught.value) == "Internal error: db locked (server 'brk', tool 'fail')"
        assert caught.value.error.data["kind"] == "server_error"
        assert caught.value.error.data["retryable"] is True
        if "time__get_current_time" in tools:
            now = await session.call_tool("time__get_current_time", {"timezone": "UTC"})
            assert now.structured_content and now.structured_content["timezone"] == "UTC"
        if "everything__echo" in tools:
            everything = await session.call_tool("everything__echo", {"message": "all"})
            assert "all" in everything.content[0].text  # type: ignore[union-attr]
        resources = {str(r.uri) for r in (await session.list_resources()).resources}
        assert "test://examples/static-text" in resources
