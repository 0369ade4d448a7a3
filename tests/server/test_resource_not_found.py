"""A resource reader says "not found" through the library's public API
(`codex_mcp.ResourceNotFound`), and every client hears the protocol's resource-not-found
error: -32602 with the URI in `data` (SEP-2164; specs/mcp-2026-07-28.md), with no traceback in
the server's log and the server still serving. Over a real stdio subprocess, to our client
(both eras) and to the official MCP SDK's."""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import anyio
import pytest
from codex_mcp.client import Client, McpError
from codex_mcp.core.jsonrpc import INVALID_PARAMS

SERVER = str(Path(__file__).resolve().parent / "servers" / "library_server.py")
MISSING = "notes://gamma"


def test_one_public_type_is_the_cores() -> None:
    import codex_mcp
    import codex_mcp.server
    from codex_mcp.core.provider import ResourceNotFound as CoreResourceNotFound

    assert codex_mcp.ResourceNotFound is codex_mcp.server.ResourceNotFound
    assert codex_mcp.ResourceNotFound is CoreResourceNotFound
    assert "ResourceNotFound" in codex_mcp.__all__ and "ResourceNotFound" in dir(codex_mcp)
    error = codex_mcp.ResourceNotFound("notes://x")
    assert (error.code, error.message, error.data) == (
        INVALID_PARAMS,
        "Resource not found: notes://x",
        {"uri": "notes://x"},
    )


def assert_quiet(errlog: Path) -> None:
    log = errlog.read_text()
    assert "Traceback" not in log and "unhandled error" not in log, log


@pytest.mark.parametrize("mode", ["legacy", "2026-07-28"])
async def test_our_client_hears_not_found(tmp_path: Path, mode: str) -> None:
    errlog = tmp_path / "stderr.log"
    with errlog.open("w") as err:
        async with Client.stdio([sys.executable, SERVER], errlog=err, mode=mode) as client:
            with pytest.raises(McpError) as raised:
                await client.read_resource(MISSING)
            assert raised.value.code == INVALID_PARAMS
            assert raised.value.message == f"Resource not found: {MISSING}"
            assert raised.value.data == {"uri": MISSING}
            with pytest.raises(McpError) as unknown:
                await client.get_prompt("nope")
            assert (unknown.value.code, unknown.value.message) == (
                INVALID_PARAMS,
                "Unknown prompt: nope",
            )
            # The server keeps serving: the next read of a note it has is answered.
            found = await client.read_resource("notes://alpha")
            assert found.contents[0]["text"] == "first note"
    assert_quiet(errlog)


@asynccontextmanager
async def sdk_session(errlog: Path) -> AsyncIterator[object]:
    from mcp import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client

    params = StdioServerParameters(command=sys.executable, args=[SERVER])
    with errlog.open("w") as err:
        async with (
            stdio_client(params, errlog=err) as (read, write),
            ClientSession(read, write) as session,
        ):
            with anyio.fail_after(30):
                await session.initialize()
            yield session


async def test_sdk_client_hears_not_found(tmp_path: Path) -> None:
    pytest.importorskip("mcp")
    from mcp import ClientSession
    from mcp.shared.exceptions import MCPError

    errlog = tmp_path / "stderr.log"
    async with sdk_session(errlog) as session:
        assert isinstance(session, ClientSession)
        with anyio.fail_after(30):
            with pytest.raises(MCPError) as raised:
                await session.read_resource(MISSING)
            assert raised.value.code == INVALID_PARAMS
            assert raised.value.message == f"Resource not found: {MISSING}"
            assert raised.value.data == {"uri": MISSING}
            with pytest.raises(MCPError) as unknown:
                await session.get_prompt("nope")
            assert unknown.value.code == INVALID_PARAMS
            assert unknown.value.message == "Unknown prompt: nope"
            found = await session.read_resource("notes://beta")
            assert found.contents[0].text == "second note"  # type: ignore[union-attr]
    assert_quiet(errlog)
