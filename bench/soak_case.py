"""A soak at a bounded rate (issue 28): clients that open a session, make plain and streamed
calls, and delete it, over and over, against one `codex-mcp-http` serving its built-in
tools, with the server's RSS printed as it goes and once the load has stopped. A server that
keeps what deleted sessions' streamed calls used grows here round after round.

The shape: `SOAK_RATE` operations a second (a call, or a session's initialize or DELETE),
`STREAMED_SHARE` of the calls streamed (`sleep`, which reports progress, so the answer turns
into SSE), the others plain (`echo`), `CALLS_PER_SESSION` calls per session, `CLIENTS`
sessions at a time. 60 s with --quick, 120 s in a full run, `--soak-seconds 600` for the
ten-minute form.
"""

from __future__ import annotations

import asyncio
import random
import time
from pathlib import Path
from typing import Any

import aiohttp
from harness import http_server

LABEL = "HTTP soak, streamed and plain calls, sessions deleted"
SOAK_RATE = 200.0
STREAMED_SHARE = 0.10
CALLS_PER_SESSION = 50
CLIENTS = 20
SAMPLE_SECONDS = 10.0
HEADERS = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
VERSION = "2025-06-18"
Rows = list[tuple[str, dict[str, Any]]]


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


class Pacer:
    """Hands out operation slots at `rate` a second, shared by every client."""

    def __init__(self, rate: float, until: float) -> None:
        self.interval = 1.0 / rate
        self.next = time.monotonic()
        self.until = until

    async def slot(self) -> bool:
        """Wait for the next slot; False once the soak's time is up."""
        now = time.monotonic()
        self.next = max(self.next + self.interval, now)
        if self.next >= self.until:
            return False
        await asyncio.sleep(self.next - now)
        return True


class Tally:
    def __init__(self) -> None:
        self.sessions = 0
        self.plain = 0
        self.streamed = 0
        self.errors = 0


async def _client(http: aiohttp.ClientSession, url: str, pacer: Pacer, tally: Tally) -> None:
    initialize = {
        "jsonrpc": "2.0",
        "id": 0,
        "method": "initialize",
        "params": {
            "protocolVersion": VERSION,
            "capabilities": {},
            "clientInfo": {"name": "soak", "version": "1"},
        },
    }
    while await pacer.slot():
        async with http.post(url, json=initialize, headers=HEADERS) as response:
            await response.read()
            if response.status != 200:
                tally.errors += 1
                continue
            headers = {
                **HEADERS,
                "Mcp-Session-Id": response.headers["Mcp-Session-Id"],
                "MCP-Protocol-Version": VERSION,
            }
        initialized = {"jsonrpc": "2.0", "method": "notifications/initialized"}
        async with http.post(url, json=initialized, headers=headers) as response:
            await response.read()
        tally.sessions += 1
        for n in range(1, CALLS_PER_SESSION + 1):
            if not await pacer.slot():
                break
            streamed = random.random() < STREAMED_SHARE
            name, arguments = (
                ("sleep", {"seconds": 0.001}) if streamed else ("echo", {"message": "x"})
            )
            params = {"name": name, "arguments": arguments, "_meta": {"progressToken": n}}
            call = {"jsonrpc": "2.0", "id": n, "method": "tools/call", "params": params}
            async with http.post(url, json=call, headers=headers) as response:
                body = await response.read()
            if b'"result"' not in body:
                tally.errors += 1
            elif streamed:
                tally.streamed += 1
            else:
                tally.plain += 1
        await pacer.slot()
        async with http.delete(url, headers=headers) as response:
            await response.read()


async def _soak(url: str, pid: int, seconds: float) -> dict[str, Any]:
    started = time.monotonic()
    pacer = Pacer(SOAK_RATE, started + seconds)
    tally = Tally()
    start = rss_mb(pid)
    samples = [start]
    print(
        f"soak: {seconds:.0f} s at {SOAK_RATE:.0f} ops/s; RSS at start {start:.0f} MB", flush=True
    )

    async def sample() -> None:
        while True:
            await asyncio.sleep(SAMPLE_SECONDS)
            samples.append(rss_mb(pid))
            elapsed = time.monotonic() - started
            print(
                f"  {elapsed:5.0f} s: RSS {samples[-1]:.0f} MB, {tally.sessions} sessions, "
                f"{tally.plain} plain and {tally.streamed} streamed calls",
                flush=True,
            )

    sampler = asyncio.create_task(sample())
    connector = aiohttp.TCPConnector(limit=CLIENTS)
    async with aiohttp.ClientSession(connector=connector) as http:
        await asyncio.gather(*(_client(http, url, pacer, tally) for _ in range(CLIENTS)))
    sampler.cancel()
    elapsed = time.monotonic() - started
    end = rss_mb(pid)  # every session deleted
    print(f"  end: RSS {end:.0f} MB, every session deleted", flush=True)
    operations = tally.plain + tally.streamed + 2 * tally.sessions
    return {
        "seconds": round(elapsed, 1),
        "ops_per_s": round(operations / elapsed, 1),
        "sessions": tally.sessions,
        "streamed_calls": tally.streamed,
        "plain_calls": tally.plain,
        "errors": tally.errors,
        "rss_start_mb": round(start, 1),
        "rss_peak_mb": round(max([*samples, end]), 1),
        "rss_end_mb": round(end, 1),
        "rss_growth_mb": round(end - start, 1),
    }


def soak_case(seconds: float, servers: list[tuple[str, list[str], dict[str, str]]]) -> Rows:
    """One soak per server: (name, its HTTP command with `{port}`, its environment); ours,
    and `--baseline`'s when given."""
    rows = []
    for name, command, env in servers:
        print(f"  {LABEL}: {name} ...", flush=True)
        with http_server(command, env) as (url, pid, _):
            rows.append((name, asyncio.run(_soak(url, pid, seconds))))
    return rows
