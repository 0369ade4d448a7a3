"""The policy point folds no interceptor while nothing could deny (the relayed call reaches
the gateway's own call_tool: no frame of the policy's on its path), and the core folds again
as soon as the policy or a gateway's entries bring a rule: a reload that hides a tool must
not leave its call path open, nor the reverse."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from codex_mcp import Server
from codex_mcp.client import Client, McpError, MemoryTransport
from codex_mcp.gateway.config.env import GatewayEnv
from codex_mcp.gateway.config.model import ServerConfig
from codex_mcp.gateway.config.parse import parse_document
from codex_mcp.gateway.serve import build_core


def _kid() -> Server:
    server = Server("kid", "1.0")

    @server.tool
    def rm() -> str:
        """Remove something."""
        return "removed"

    @server.tool
    def echo() -> str:
        """Say hello."""
        return "hello"

    return server


def _config(**entry: Any) -> Any:
    return parse_document({"mcpServers": {"kid": {"command": "never-run", **entry}}}, "test")


@pytest.fixture
async def core(tmp_path: Path) -> AsyncIterator[Any]:
    kid = _kid()

    def in_memory(server: ServerConfig) -> MemoryTransport:
        return MemoryTransport(kid)

    served = build_core(_config(), GatewayEnv(cache_dir=tmp_path), open_transport=in_memory)
    await served.start()
    try:
        yield served
    finally:
        await served.aclose()


async def _calls(client: Client, name: str) -> bool:
    try:
        await client.call_tool(name, {}, retries=0)
    except McpError:
        return False
    return True


async def test_a_reload_that_hides_a_tool_refuses_its_call_and_one_that_shows_it_allows(
    core: Any,
) -> None:
    gateway = core.provider
    async with Client.memory(core) as client:
        assert core.served.call_tool == gateway.call_tool  # open: the gateway's own
        assert await _calls(client, "kid__rm")
        gateway.config = _config(disabled_tools=["rm"])  # what a reload assigns
        assert core.served.call_tool != gateway.call_tool  # a rule: the policy decides each call
        assert not await _calls(client, "kid__rm")
        assert await _calls(client, "kid__echo")
        gateway.config = _config()
        assert core.served.call_tool == gateway.call_tool
        assert await _calls(client, "kid__rm")
