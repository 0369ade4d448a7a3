"""Names callers invent cannot grow /metrics (issue 28): thousands of calls of tools and
methods the server does not have, with long names, against a real server (one process,
and two workers sharing their metrics files), then one scrape, its size asserted small.

Hostile-input classes (/work/shared/hostile-input.md): "size" of the values we keep
(metric labels) and "counts" (distinct series): a tool the server does not list or a
method it does not serve is counted under `other`, whatever its name; a tool it lists
keeps its own series however many names were invented before it was called.
"""

from __future__ import annotations

import asyncio
import time

import aiohttp
import pytest
from codex_mcp.observe.call_metrics import FLUSH_SECONDS
from http_helpers import call, open_session
from http_process import HttpProcess
from observe_helpers import parse, value
from scale_setup import REDIS, SERVING, SHARED, RedisServer

#: Far past what a scrape needs; before the fix one was hundreds of MB.
MAX_SCRAPE_BYTES = 2 * 1024 * 1024
CALLS = 2000
NAME_BYTES = 16 * 1024


async def _invent_names(url: str, tool: str) -> None:
    """CALLS requests, each an unknown tool or an unknown method with a long name of its
    own, then one call of the real `tool`, all on one session, a few at a time."""
    async with aiohttp.ClientSession() as http:
        session = await open_session(http, url)
        gate = asyncio.Semaphore(16)

        async def send(index: int) -> None:
            name = f"{index:06d}" + "x" * NAME_BYTES
            if index % 2:
                message = call(index, name, {})
            else:
                message = {"jsonrpc": "2.0", "id": index, "method": name, "params": {}}
            async with gate, http.post(url, json=message, headers=session) as reply:
                assert reply.status == 200, await reply.text()
                assert "error" in await reply.json()

        await asyncio.gather(*(send(index) for index in range(CALLS)))
        async with http.post(url, json=call(CALLS, tool, {}), headers=session) as reply:
            assert "error" not in await reply.json()


async def _scrape_text(url: str) -> str:
    connector = aiohttp.TCPConnector(force_close=True)
    async with aiohttp.ClientSession(connector=connector) as http, http.get(url) as reply:
        assert reply.status == 200
        return await reply.text()


def _check(text: str, tool: str) -> None:
    assert len(text.encode()) < MAX_SCRAPE_BYTES, f"one scrape is {len(text) >> 20} MiB"
    assert max(len(line) for line in text.splitlines()) < 1024
    samples = parse(text)
    assert value(samples, "codex_mcp_requests_total", method="tools/call", tool="other") > 0
    assert value(samples, "codex_mcp_requests_total", method="other", tool="other") > 0
    # The tool the server has, called after them all, still has its own series.
    assert value(samples, "codex_mcp_requests_total", method="tools/call", tool=tool) == 1


@pytest.mark.slow
async def test_invented_names_cannot_grow_a_scrape() -> None:
    server = HttpProcess("--max-session-inflight", "100")
    try:
        await _invent_names(server.url, "echo")
        text = await _scrape_text(f"{server.base}/metrics")
        _check(text, "echo")
        assert "Traceback" not in server.stderr
    finally:
        server.stop()


@pytest.mark.slow
@pytest.mark.skipif(REDIS is None, reason="redis-server not installed")
async def test_invented_names_cannot_grow_a_scrape_of_every_worker() -> None:
    redis = RedisServer()
    server = HttpProcess("--workers", "2", "--serve", SHARED, "--redis-url", redis.url)
    try:
        deadline = time.monotonic() + 60  # a loaded machine starts two workers slowly
        while server.stderr.count(SERVING) < 2:
            assert time.monotonic() < deadline, f"the workers never served:\n{server.stderr}"
            await asyncio.sleep(0.05)
        await _invent_names(server.url, "whoami")
        # Each worker writes its files within FLUSH_SECONDS: then any scrape shows all.
        deadline = time.monotonic() + 30
        while True:
            text = await _scrape_text(f"{server.base}/metrics")
            samples = parse(text)
            counted = sum(
                value(samples, "codex_mcp_requests_total", method=method, tool=tool)
                for method, tool in [("tools/call", "other"), ("other", "other")]
            )
            if counted == CALLS:
                break
            assert time.monotonic() < deadline, f"{counted} of {CALLS} invented calls counted"
            await asyncio.sleep(FLUSH_SECONDS)
        _check(text, "whoami")
    finally:
        server.stop()
        redis.stop()
