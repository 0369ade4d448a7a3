"""What large results cost a server's memory: our stdio server answering 20 MB results, and
`codex-mcp -- <child>` relaying them, each a real subprocess over real pipes, its resident
memory read from /proc (the server's alone: a gateway's child is not counted)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from codex_mcp.client import Client
from gateway.gateway_helpers import CMD_MCP, PY, gateway_env

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Linux /proc")

MB = 1_000_000
SIZE = 20 * MB


def _memory(pid: int) -> dict[str, int]:
    """VmRSS (now) and VmHWM (the peak so far), in bytes."""
    found = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        name, _, value = line.partition(":")
        if name in ("VmRSS", "VmHWM"):
            found[name] = int(value.split()[0]) * 1024
    return found


async def _four_large_calls(command: list[str]) -> tuple[int, dict[str, int]]:
    """The server's RSS after a small call, and its memory after four 20 MB results."""
    env = gateway_env(None, CODEX_MCP_BENCH_TOOLS="1")
    async with Client.stdio(command, env=env, timeout=60) as client:
        pid = client.transport.process.pid  # type: ignore[attr-defined]
        warm = await client.call_tool("blob", {"size": 1000}, retries=0)
        assert warm.text == "x" * 1000
        start = _memory(pid)["VmRSS"]
        for _ in range(4):
            result = await client.call_tool("blob", {"size": SIZE}, retries=0)
            assert len(result.text) == SIZE
            del result
        return start, _memory(pid)


async def test_the_gateway_relays_large_results_without_keeping_copies() -> None:
    """At its peak the gateway holds the answer's line, orjson's copy of it and the parsed
    text (about 3x its size; it was over 5x), and after each call it is back where it
    started: each relayed answer used to stay alive in a reference cycle until the
    collector ran (+20 MB per call), and glibc kept the rest in its heap."""
    start, memory = await _four_large_calls([PY, CMD_MCP, "--", PY, CMD_MCP])
    assert memory["VmHWM"] - start < 4 * SIZE, f"peak {memory['VmHWM'] / MB:.0f} MB"
    assert memory["VmRSS"] - start < SIZE // 2, f"after {memory['VmRSS'] / MB:.0f} MB"


async def test_the_stdio_server_gives_back_what_a_large_result_freed() -> None:
    """Once a large answer is written, what encoding it freed goes back to the OS: the
    server used to stay 20 MB above its start after 20 MB results."""
    start, memory = await _four_large_calls([PY, CMD_MCP])
    assert memory["VmHWM"] - start < 3 * SIZE, f"peak {memory['VmHWM'] / MB:.0f} MB"
    assert memory["VmRSS"] - start < SIZE // 2, f"after {memory['VmRSS'] / MB:.0f} MB"
