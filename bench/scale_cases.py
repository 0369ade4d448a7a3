"""The scale cases of the benchmark suite (bench/run.py): codex-mcp with sessions on Redis
and 1, 2 and 4 workers, beside one in-memory process, in the same run; and what a Redis
round trip costs, next to how many a call makes."""

from __future__ import annotations

import asyncio
import contextlib
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import aiohttp
from codex_mcp.bench import http_load
from codex_mcp.bench.stats import percentile
from harness import ECHO, PY, ROOT, free_port, http_server, median_of

HTTP = [PY, str(ROOT / "cmd/http"), "--port", "{port}", "--log-level", "warning"]
Rows = list[tuple[str, dict[str, Any]]]


@contextlib.contextmanager
def redis_server() -> Iterator[str | None]:
    """A throwaway redis-server on a free loopback port (no persistence); None without one."""
    binary = shutil.which("redis-server") or (
        "/usr/bin/redis-server" if Path("/usr/bin/redis-server").exists() else None
    )
    if binary is None:
        yield None
        return
    port = free_port()
    process = subprocess.Popen(
        [binary, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        for _ in range(200):
            with contextlib.suppress(OSError):
                socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                break
            time.sleep(0.05)
        yield f"redis://127.0.0.1:{port}/0"
    finally:
        process.terminate()
        process.wait(10)


async def _commands(url: str) -> int:
    """Commands Redis has run so far (INFO commandstats)."""
    import redis.asyncio as redis

    client = redis.Redis.from_url(url)
    try:
        stats = await client.info("commandstats")
        return sum(int(v["calls"]) for k, v in stats.items() if k != "cmdstat_info")
    finally:
        await client.aclose()


def scale_cases(
    chosen: Callable[[str], bool],
    *,
    runs: int,
    calls: int,
    cap: float,
) -> Iterator[tuple[str, Rows]]:
    workers_label = "HTTP echo, workers and Redis"
    trip_label = "Redis round trip"
    if not (chosen(workers_label) or chosen(trip_label)):
        return
    with redis_server() as url:
        if url is None:
            print("  redis-server not installed: the scale cases are skipped", file=sys.stderr)
            return
        if chosen(workers_label):
            yield workers_label, _workers(url, runs, calls, cap)
        if chosen(trip_label):
            yield trip_label, [("codex-mcp", asyncio.run(_round_trip(url)))]


def _workers(url: str, runs: int, calls: int, cap: float) -> Rows:
    setups = [
        ("1 worker, in memory", HTTP),
        ("1 worker, Redis", [*HTTP, "--redis-url", url]),
        ("2 workers, Redis", [*HTTP, "--workers", "2", "--redis-url", url]),
        ("4 workers, Redis", [*HTTP, "--workers", "4", "--redis-url", url]),
    ]
    rows: Rows = []
    for name, command in setups:
        print(f"  {name} ...", file=sys.stderr, flush=True)

        def once(
            command: list[str] = command, shared: bool = "--redis-url" in command
        ) -> dict[str, Any]:
            with http_server(command, None) as (mcp_url, pid, _):
                before = asyncio.run(_commands(url)) if shared else 0
                figures: dict[str, Any] = asyncio.run(
                    http_load.measure(mcp_url, params=ECHO, calls=calls, max_seconds=cap, pid=pid)
                )
                if shared:
                    made = 100 + figures["sequential_calls"] + figures["concurrent_calls"]
                    figures["redis_cmds_per_call"] = (asyncio.run(_commands(url)) - before) / made
                return figures

        rows.append((name, median_of(runs, once)))
    base = rows[0][1].get("throughput_per_s")
    for _, figures in rows:
        if base and figures.get("throughput_per_s"):
            figures["x_in_memory"] = figures["throughput_per_s"] / base
    return rows


async def _round_trip(url: str) -> dict[str, Any]:
    """A Redis round trip (PING, and the HGETALL that loads a session), and what loading
    a session costs the first call a replica serves of it, next to a call on a session
    it already holds."""
    import redis.asyncio as redis

    client = redis.Redis.from_url(url)
    try:
        pings, loads = [], []
        await client.hset("bench:session", mapping={"v": "2025-06-18", "caps": "{}", "lvl": "0"})
        for _ in range(2000):
            started = time.perf_counter()
            await client.ping()
            pings.append(time.perf_counter() - started)
        for _ in range(2000):
            started = time.perf_counter()
            await client.hgetall("bench:session")
            loads.append(time.perf_counter() - started)
    finally:
        await client.aclose()
    first, cached = await asyncio.to_thread(_first_and_cached, url)
    return {
        "redis_ping_us_p50": percentile(pings, 0.5) * 1e6,
        "session_load_us_p50": percentile(loads, 0.5) * 1e6,
        "first_call_elsewhere_ms_p50": percentile(first, 0.5) * 1000,
        "cached_call_ms_p50": percentile(cached, 0.5) * 1000,
    }


def _first_and_cached(url: str) -> tuple[list[float], list[float]]:
    command = [*HTTP, "--redis-url", url]
    with http_server(command, None) as (a, _, _), http_server(command, None) as (b, _, _):
        return asyncio.run(_time_first_calls(a, b))


async def _time_first_calls(a: str, b: str) -> tuple[list[float], list[float]]:
    first, cached = [], []
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": ECHO}
    async with aiohttp.ClientSession() as http:
        for _ in range(200):
            session = http_load.HttpSession(http, a)
            await session.open()  # made on a ...
            for timings in (first, cached):  # ... its first and second call on b
                started = time.perf_counter()
                async with http.post(b, json=body, headers=session.headers) as response:
                    await response.read()
                timings.append(time.perf_counter() - started)
    return first, cached
