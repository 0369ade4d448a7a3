"""Hostile children for the gateway's per-front revision choice (issue 32): a child asked
for 2026-07-28 over its second connection that refuses `server/discover`, answers it with
something that is no DiscoverResult, never answers, or exits. Each time a 2026-07-28 front
is served in the legacy revision, every call answered, and the child is asked once only
(its refusal is remembered)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from codex_mcp import Context, Server
from codex_mcp.client import Client, MemoryTransport
from codex_mcp.core.stateless_context import StatelessContext
from codex_mcp.gateway.config.env import GatewayEnv
from codex_mcp.gateway.config.parse import parse_document
from codex_mcp.gateway.serve import build_core

from .gateway_helpers import PY, SERVERS, Lines, gateway, stdio, until, write_config

MODERN = "2026-07-28"
REFUSED = "does not answer server/discover"


@pytest.mark.slow
@pytest.mark.parametrize("how", ["refuse", "malformed", "silent", "exit"])
async def test_a_child_refusing_2026_07_28_serves_a_2026_front_in_legacy(
    tmp_path: Path, how: str
) -> None:
    child = stdio([PY, str(SERVERS / "legacy_only.py"), f"--discover={how}"])
    config = write_config(tmp_path, {"ex": {**child, "startup_timeout_sec": 5}})
    errlog = Lines()
    async with gateway(config, mode=MODERN, errlog=errlog, env={"DEBUG": "1"}) as client:
        assert client.session.stateless is not None
        for n in range(3):
            result = await client.call_tool("ex__add", {"a": n, "b": 2}, retries=0)
            assert not result.is_error and str(n + 2) in result.text, result.text
        refusals = [line for line in errlog.lines if REFUSED in line]
        assert len(refusals) == 1, errlog.lines[-20:]
        # the legacy session still serves a legacy-shaped question's round (the child's
        # elicitation without a declared capability is refused by the gateway, answered)
        asked = await client.call_tool("ex__test_elicitation", {"message": "Who?"}, retries=0)
        assert asked.is_error and "elicitation" in asked.text, asked.text


# -- the second connection's lifetime, in process (children reached in memory) -----------


@pytest.fixture
async def in_process(tmp_path: Path) -> AsyncIterator[Any]:
    child = Server("dual", "1.0")

    @child.tool
    def revision(ctx: Context) -> str:
        """Which revision this request came in."""
        return "stateless" if isinstance(ctx, StatelessContext) else "session"

    config = parse_document({"mcpServers": {"dual": {"command": "never-run"}}}, "test")
    core = build_core(
        config, GatewayEnv(cache_dir=tmp_path), open_transport=lambda _s: MemoryTransport(child)
    )
    await core.start()
    try:
        yield core
    finally:
        await core.aclose()


async def test_a_lane_that_dies_is_opened_again_and_stops_with_its_child(in_process: Any) -> None:
    core = in_process
    [child] = core.provider.shared
    async with Client.memory(core, mode=MODERN) as modern, Client.memory(core) as legacy:
        assert (await modern.call_tool("dual__revision")).text == "stateless"
        assert (await legacy.call_tool("dual__revision")).text == "session"
        first = child.lane.connection
        assert first is not None
        await first.session.aclose()  # it dies: not opened again on its own
        await until(lambda: child.lane.connection is None)
        assert (await legacy.call_tool("dual__revision")).text == "session"
        assert (await modern.call_tool("dual__revision")).text == "stateless"
        second = child.lane.connection
        assert second is not None and second is not first and not second.session.closed
        assert child.lane.speaks is True
        await child.stop()
        assert second.session.closed and child.lane.connection is None
