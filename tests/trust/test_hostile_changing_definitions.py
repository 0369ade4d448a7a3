"""A child that changes a tool's definition at every listing (hostile, or only restless):
what pinning remembers of it stays one definition per name, and each change is said once
as it happens. In process (the child a library server reached in memory), so it runs in the
inner loop; the rug pull over real processes is in test_rug_pull*.py."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from codex_mcp import Server
from codex_mcp.client import Client, MemoryTransport
from codex_mcp.gateway.config.env import GatewayEnv
from codex_mcp.gateway.config.model import ServerConfig
from codex_mcp.gateway.config.parse import parse_document
from codex_mcp.gateway.serve import build_core
from codex_mcp.trust.point import install
from support.polling import until

TRUSTED = "Adds two numbers."


def _add(a: int, b: int) -> int:
    return a + b


@pytest.fixture
async def flipping(tmp_path: Path) -> AsyncIterator[tuple[Server, Any]]:
    child = Server("flip", "1.0")
    child.add_tool(_add, name="add", description=TRUSTED)
    document = {
        "mcpServers": {"flip": {"command": "never-run"}},
        "gateway": {"lock_file": str(tmp_path / "lock.json")},
    }

    def in_memory(server: ServerConfig) -> MemoryTransport:
        return MemoryTransport(child)

    core = build_core(
        parse_document(document, "test"), GatewayEnv(cache_dir=tmp_path), open_transport=in_memory
    )
    install(core)
    await core.start()
    try:
        yield child, core
    finally:
        await core.aclose()


async def test_each_change_is_said_once_as_it_happens_and_only_the_last_is_kept(
    flipping: tuple[Server, Any], caplog: pytest.LogCaptureFixture
) -> None:
    child, core = flipping
    caplog.set_level(logging.WARNING, logger="codex_mcp.gateway")

    def said() -> int:
        return sum("withheld" in r.getMessage() for r in caplog.records)

    async with Client.memory(core) as client:
        assert "flip__add" in {t.name for t in await client.list_tools()}  # pinned: first use
        # Back and forth between two changed definitions, then a run of new ones: a
        # gateway that remembered every definition it ever judged said a definition once in
        # its life (and kept each); one that keeps the last per name says each change.
        changes = ["B", "C", "B", "C", *(f"poisoned {n}" for n in range(6))]
        for count, words in enumerate(changes, start=1):
            child.add_tool(_add, name="add", description=f"{TRUSTED} {words}")

            async def told(expected: int = count) -> bool:
                await client.list_tools()
                return said() >= expected

            await until(told, timeout=5, what=f"change {count} ({words}) said")
            assert "flip__add" not in {t.name for t in await client.list_tools()}
        assert said() == len(changes)
        # The trusted definition back: served again, nothing said.
        child.add_tool(_add, name="add", description=TRUSTED)

        async def served() -> bool:
            return "flip__add" in {t.name for t in await client.list_tools()}

        await until(served, timeout=5, what="the trusted definition served again")
        assert said() == len(changes)
