"""The scale cases of the benchmark suite (bench/run.py): codex-mcp with sessions on Redis
and 1, 2 and 4 workers, beside one in-memory process, in the same run; and what a Redis
round trip costs, next to how many a call makes."""

from __future__ import annotations

import asyncio
import contextlib
import os
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
from harness import ECHO, PY, ROOT, free_port, http_server, medians

SERVE = [PY, str(ROOT / "cmd/http"), "--port", "{port}"]
HTTP = [*SERVE, "--log-level", "warning"]
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


#: A codex-mcp to measure: its name in the rows ("" for today's), the command that starts
#: its HTTP server ("{port}" to fill in) and its extra environment (a baseline's PYTHONPATH).
Target = tuple[str, list[str], dict[str, str]]
TODAY: Target = ("", SERVE, {})


def scale_cases(
    chosen: Callable[[str], bool],
    *,
    runs: int,
    calls: int,
    cap: float,
    baseline: Target | None = None,
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
            targets = [TODAY] if baseline is None else [TODAY, baseline]
            yield workers_label, _workers(url, runs, calls, cap, targets)
        if chosen(trip_label):
            yield trip_label, [("codex-mcp", asyncio.run(_round_trip(url)))]


def _workers(url: str, runs: int, calls: int, cap: float, targets: list[Target]) -> Rows:
    """Each setup for each target, interleaved run by run (the machine's drift hits them
    alike); the median of the runs per row. The last two rows (today's code only) are one
    in-memory process with the share of the 32 clients each of 2 and of 4 workers gets:
    what a process costs per call at that load, without any worker or Redis."""
    redis = ["--redis-url", url]
    setups = [  # name, options, workers, clients, for the baseline too
        ("1 worker, in memory", [], 1, 32, True),
        ("1 worker, Redis", redis, 1, 32, True),
        ("2 workers, Redis", ["--workers", "2", *redis], 2, 32, True),
        ("4 workers, Redis", ["--workers", "4", *redis], 4, 32, True),
        ("1 worker, in memory, 16 clients", [], 1, 16, False),
        ("1 worker, in memory, 8 clients", [], 1, 8, False),
    ]
    results: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for run in range(runs):
        for name, options, workers, clients, compared in setups:
            for label, command, env in targets if compared else targets[:1]:
                row = f"{name} {label}".strip()
                print(f"  {row} (run {run + 1} of {runs}) ...", file=sys.stderr, flush=True)
                figures = _measure(
                    [*command, "--log-level", "warning", *options],
                    env,
                    url,
                    workers,
                    clients,
                    calls,
                    cap,
                )
                results.setdefault((label, name), []).append(figures)
    rows: Rows = []
    for (label, name), found in results.items():
        figures = medians(found)
        base = medians(results[label, setups[0][0]])
        if base.get("throughput_per_s") and figures.get("throughput_per_s"):
            figures["x_in_memory"] = figures["throughput_per_s"] / base["throughput_per_s"]
        if base.get("cpu_us_per_call") and figures.get("cpu_us_per_call"):
            figures["cpu_x_in_memory"] = figures["cpu_us_per_call"] / base["cpu_us_per_call"]
            # What one core serves at this CPU per call: the projection's unit.
            figures["calls_per_core_s"] = 1e6 / figures["cpu_us_per_call"]
        rows.append((f"{name} {label}".strip(), figures))
    return rows


def _measure(
    command: list[str],
    env: dict[str, str],
    url: str,
    workers: int,
    clients: int,
    calls: int,
    cap: float,
) -> dict[str, Any]:
    shared = "--redis-url" in command
    with http_server(command, {**os.environ, **env}) as (mcp_url, pid, _):
        asyncio.run(_every_worker_ready(mcp_url.removesuffix("/mcp"), workers))
        before = asyncio.run(_commands(url)) if shared else 0
        figures: dict[str, Any] = asyncio.run(
            http_load.measure(
                mcp_url,
                params=ECHO,
                calls=calls,
                concurrency=clients,
                max_seconds=cap,
                pid=pid,
            )
        )
        if shared:
            made = 100 + figures["sequential_calls"] + figures["concurrent_calls"]
            figures["redis_cmds_per_call"] = (asyncio.run(_commands(url)) - before) / made
        return figures


async def _every_worker_ready(base: str, workers: int) -> None:
    """The first worker answering is not all of them: each takes its own time to reach
    Redis (503 until then). Fresh connections reach a worker the kernel picks, so 8 ready
    answers per worker in a row leave a worker still starting a chance of (1 - 1/n)^8n."""
    needed, deadline = 8 * workers if workers > 1 else 1, time.monotonic() + 60
    connector = aiohttp.TCPConnector(force_close=True)
    async with aiohttp.ClientSession(connector=connector) as http:
        in_a_row = 0
        while in_a_row < needed:
            if time.monotonic() > deadline:
                raise RuntimeError(f"the {workers} workers were not all ready within 60 s")
            async with http.get(f"{base}/readyz") as response:
                ready = response.status == 200 and (await response.json())["status"] == "ready"
            in_a_row = in_a_row + 1 if ready else 0
            if not ready:
                await asyncio.sleep(0.05)


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
