"""A soak in rounds at a bounded rate (issues 28 and 39): each round, `CLIENTS` sessions
at a time make `CALLS_PER_SESSION` calls of about 4 KB each (nine in ten streamed: the tool
reports progress, so the answer turns into SSE; the rest plain JSON) and are deleted;
the server's RSS is read after each round. A server that keeps what delivered streams or
deleted sessions held grows here round after round (issue 39: 74, 104, 130 ... 161 MB).

The server is `codex-mcp-http --serve tests/memory/servers/rounds_server.py` (the tools of
the memory rounds test), ours and `--baseline`'s alike. At most `SOAK_RATE` calls a second;
rounds start until the soak's time is up (60 s with --quick, 120 s in a full run,
`--soak-seconds 600` for the ten-minute form), a round already started runs to its end;
then the server idles for 5 s, in which its session reaper hands back what the deleted
sessions freed (decision 86).
"""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Any

import aiohttp
from harness import http_server

LABEL = "HTTP soak, rounds of streamed and plain calls, sessions deleted"
SERVER = Path(__file__).resolve().parents[1] / "tests/memory/servers/rounds_server.py"
SOAK_RATE = 2000.0
PLAIN_EVERY = 10  # one call in ten plain, the others streamed
CALLS_PER_SESSION = 200
CLIENTS = 50
#: Sessions idle this long end: the reaper, which also hands freed memory back, runs every
#: quarter of it (the default TTL, 1800 s, makes that every 30 s).
SESSION_TTL = "8"
IDLE_SAMPLES = 10  # RSS read every 0.5 s once the rounds are over; the least is reported
HEADERS = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
VERSION = "2025-06-18"
Rows = list[tuple[str, dict[str, Any]]]


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


class Pacer:
    """Hands out call slots at `rate` a second at most, shared by every client."""

    def __init__(self, rate: float) -> None:
        self.interval = 1.0 / rate
        self.next = time.monotonic()

    async def slot(self) -> None:
        now = time.monotonic()
        self.next = max(self.next + self.interval, now)
        await asyncio.sleep(self.next - now)


class Tally:
    def __init__(self) -> None:
        self.sessions = 0
        self.plain = 0
        self.streamed = 0
        self.errors = 0


async def _session(http: aiohttp.ClientSession, url: str, pacer: Pacer, tally: Tally) -> None:
    """Open a session, make its calls, delete it."""
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
    async with http.post(url, json=initialize, headers=HEADERS) as response:
        await response.read()
        if response.status != 200:
            tally.errors += 1
            return
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
        await pacer.slot()
        streamed = n % PLAIN_EVERY != 0
        params = {
            "name": "streamed" if streamed else "plain",
            "arguments": {"n": n},
            "_meta": {"progressToken": n},
        }
        call = {"jsonrpc": "2.0", "id": n, "method": "tools/call", "params": params}
        async with http.post(url, json=call, headers=headers) as response:
            body = await response.read()
        if b'"result"' not in body:
            tally.errors += 1
        elif streamed:
            tally.streamed += 1
        else:
            tally.plain += 1
    async with http.delete(url, headers=headers) as response:
        await response.read()


async def _soak(url: str, pid: int, seconds: float) -> dict[str, Any]:
    pacer = Pacer(SOAK_RATE)
    tally = Tally()
    connector = aiohttp.TCPConnector(limit=CLIENTS)
    async with aiohttp.ClientSession(connector=connector) as http:
        await _session(http, url, pacer, Tally())  # what the first calls import and make
        start = rss_mb(pid)
        print(f"soak: {seconds:.0f} s of rounds; RSS after a first session {start:.1f} MB")
        began = time.monotonic()
        rounds: list[float] = []
        while time.monotonic() - began < seconds:
            await asyncio.gather(*(_session(http, url, pacer, tally) for _ in range(CLIENTS)))
            rounds.append(rss_mb(pid))  # every session of the round deleted
            elapsed = time.monotonic() - began
            print(f"  round {len(rounds)} ({elapsed:.0f} s): RSS {rounds[-1]:.1f} MB", flush=True)
    elapsed = time.monotonic() - began
    idle = rounds[-1]
    for _ in range(IDLE_SAMPLES):  # the session reaper's turn (every 2 s at this TTL)
        await asyncio.sleep(0.5)
        idle = min(idle, rss_mb(pid))
    print(f"  idle {IDLE_SAMPLES / 2:.0f} s: RSS {idle:.1f} MB", flush=True)
    second = rounds[1] if len(rounds) > 1 else rounds[0]
    return {
        "seconds": round(elapsed, 1),
        "calls_per_s": round((tally.plain + tally.streamed) / elapsed, 1),
        "rounds": len(rounds),
        "streamed_calls": tally.streamed,
        "plain_calls": tally.plain,
        "errors": tally.errors,
        "rss_start_mb": round(start, 1),
        "rss_round_1_mb": round(rounds[0], 1),
        "rss_round_2_mb": round(second, 1),
        "rss_end_mb": round(rounds[-1], 1),
        "rss_peak_mb": round(max(rounds), 1),
        "rss_idle_mb": round(idle, 1),
        "end_over_round_2_pct": round(100 * (rounds[-1] / second - 1), 1),
        "rss_rounds_mb": " ".join(f"{r:.0f}" for r in rounds),
    }


def soak_case(seconds: float, servers: list[tuple[str, list[str], dict[str, str]]]) -> Rows:
    """One soak per server: (name, its HTTP command with `{port}`, its environment); ours,
    and `--baseline`'s when given, each serving the rounds server's tools."""
    rows = []
    for name, command, env in servers:
        print(f"  {LABEL}: {name} ...", flush=True)
        serving = [*command, "--serve", str(SERVER), "--session-ttl", SESSION_TTL]
        with http_server(serving, env) as (url, pid, _):
            rows.append((name, asyncio.run(_soak(url, pid, seconds))))
    return rows
