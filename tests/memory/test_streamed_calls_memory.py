"""What streamed calls leave behind once their sessions are deleted (issue 28).

A real `codex-mcp-http` subprocess serves its built-in tools; each round, 50 sessions make
200 calls each to `sleep`, which reports progress, so every POST's answer turns into an
SSE stream (the streamed path), and every session is deleted at the end of its round. The
server's RSS, read from /proc, must be back near its start after the first round and stay
within 10% of that over 10 rounds (100,000 streamed calls). Before the fix it went from 43
to 100 MB in the first round and to 127 MB by the tenth, the replay buffers' events each
holding orjson's 4 KB output buffer in glibc's heap, which kept it after the sessions were
deleted; now 43 -> 52 -> 54 MB. 1.5 to 2.5 minutes on a shared 2-core machine.
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import aiohttp
import pytest
from gateway.gateway_helpers import launch_http, stop

pytestmark = [
    pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Linux /proc"),
    pytest.mark.slow,
]

MB = 1024 * 1024
ROUNDS = 10
SESSIONS = 50
CALLS_PER_SESSION = 200  # 10,000 streamed calls a round
#: What one round may leave behind, its sessions deleted: pools and caches warmed once
#: (the replay buffers' 4 KB buffers made it 54 MB).
FIRST_ROUND_GROWTH = 20 * MB
JSON_AND_SSE = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
VERSION = "2025-06-18"


def rss(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    raise AssertionError(f"no VmRSS for {pid}")


async def one_session(http: aiohttp.ClientSession, url: str) -> None:
    """Open a session, make its streamed calls (each must be answered over SSE), delete it."""
    initialize = {
        "jsonrpc": "2.0",
        "id": 0,
        "method": "initialize",
        "params": {
            "protocolVersion": VERSION,
            "capabilities": {},
            "clientInfo": {"name": "streams-and-deletes", "version": "1"},
        },
    }
    async with http.post(url, json=initialize, headers=JSON_AND_SSE) as response:
        assert response.status == 200, await response.text()
        headers = {
            **JSON_AND_SSE,
            "Mcp-Session-Id": response.headers["Mcp-Session-Id"],
            "MCP-Protocol-Version": VERSION,
        }
    initialized = {"jsonrpc": "2.0", "method": "notifications/initialized"}
    async with http.post(url, json=initialized, headers=headers) as response:
        assert response.status == 202
    for n in range(1, CALLS_PER_SESSION + 1):
        streamed = {
            "jsonrpc": "2.0",
            "id": n,
            "method": "tools/call",
            "params": {
                "name": "sleep",
                "arguments": {"seconds": 0.001},  # one progress notification, then the result
                "_meta": {"progressToken": n},
            },
        }
        async with http.post(url, json=streamed, headers=headers) as response:
            body = await response.read()
            assert response.headers["Content-Type"].startswith("text/event-stream"), body
            assert b'"method":"notifications/progress"' in body, body
            assert b'"id":%d,"result"' % n in body, body
    async with http.delete(url, headers=headers) as response:
        assert response.status == 200


@pytest.mark.timeout(900)
async def test_streamed_calls_give_their_memory_back_when_sessions_are_deleted() -> None:
    process, url = launch_http()  # the built-in tools
    try:
        connector = aiohttp.TCPConnector(limit=SESSIONS)
        async with aiohttp.ClientSession(connector=connector) as http:
            start = rss(process.pid)
            print(f"start: {start / MB:.0f} MB", flush=True)
            after: list[int] = []
            for _ in range(ROUNDS):
                await asyncio.gather(*(one_session(http, url) for _ in range(SESSIONS)))
                after.append(rss(process.pid))
                print(f"round {len(after)}: {after[-1] / MB:.0f} MB", flush=True)
    finally:
        stop(process)
    summary = f"start {start / MB:.0f} MB, rounds: {[round(r / MB) for r in after]} MB"
    assert after[0] - start < FIRST_ROUND_GROWTH, summary
    assert after[-1] <= after[0] * 1.10, summary
