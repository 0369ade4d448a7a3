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
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import aiohttp
from codex_mcp.bench import http_load
from codex_mcp.bench.stats import percentile
from harness import ECHO, PY, ROOT, free_port, http_server, medians, stamp

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


async def _commands(urls: tuple[str, ...]) -> int:
    """Commands the Redis servers at `urls` have run so far (INFO commandstats, summed)."""
    import redis.asyncio as redis

    total = 0
    for url in urls:
        client = redis.Redis.from_url(url)
        try:
            stats = await client.info("commandstats")
            total += sum(int(v["calls"]) for k, v in stats.items() if k != "cmdstat_info")
        finally:
            await client.aclose()
    return total


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


#: `--workers N` without Redis (refused by codex-mcp-http): the floor of the Redis rows.
FLOOR = [PY, str(ROOT / "bench/floors/workers_in_memory.py")]


@dataclass(frozen=True)
class Setup:
    name: str
    options: list[str]
    #: Servers started side by side, and the workers of each.
    replicas: int = 1
    workers: int = 1
    #: Clients (sessions calling at once) per server.
    clients: int = 32
    #: Each session on a connection of its own (separate clients), or one shared pool.
    own_connections: bool = True
    #: Started by the floor's launcher (the supervisor without Redis) rather than the CLI.
    floor: bool = False
    #: Run for the baseline too, or for today's code only.
    compared: bool = True
    #: The row whose processes are the same without Redis: this row's floor.
    floor_of: str | None = None


def _setups(redis: list[str]) -> list[Setup]:
    def workers(n: int) -> list[str]:
        return ["--workers", str(n), *redis]

    return [
        Setup("1 worker, in memory", []),
        Setup("1 worker, Redis", redis, floor_of="1 worker, in memory"),
        Setup("2 workers, in memory (floor)", [], workers=2, floor=True),
        Setup("2 workers, Redis", workers(2), workers=2, floor_of="2 workers, in memory (floor)"),
        Setup("4 workers, in memory (floor)", [], workers=4, floor=True),
        Setup("4 workers, Redis", workers(4), workers=4, floor_of="4 workers, in memory (floor)"),
        Setup(
            "4 workers, Redis, one pool of connections",
            workers(4),
            workers=4,
            own_connections=False,
            compared=False,
            floor_of="4 workers, in memory (floor)",
        ),
        Setup("2 replicas, in memory, 16 clients each", [], replicas=2, clients=16, compared=False),
        Setup(
            "2 replicas, Redis, 16 clients each",
            redis,
            replicas=2,
            clients=16,
            compared=False,
            floor_of="2 replicas, in memory, 16 clients each",
        ),
    ]


def _workers(url: str, runs: int, calls: int, cap: float, targets: list[Target]) -> Rows:
    """Each setup for each target, interleaved run by run (the machine's drift hits them
    alike); the median of the runs per row. Each Redis row has a floor: the same processes
    (the supervisor and its workers, each session on its own connection so that it stays
    on one worker) keeping sessions in memory. On 2 cores shared with the load generator,
    more processes than cores cost CPU per call by themselves (context switches, cold
    caches, fewer requests per wakeup); the floor measures that, so the Redis row's excess
    over it is what Redis and sharing sessions cost."""
    setups = _setups(["--redis-url", url])
    results: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for run in range(runs):
        for setup in setups:
            for label, command, env in targets if setup.compared else targets[:1]:
                row = f"{setup.name} {label}".strip()
                print(f"  {row} (run {run + 1} of {runs}) ...", file=sys.stderr, flush=True)
                if setup.floor:
                    command = [*FLOOR, str(setup.workers), "{port}"]
                command = [*command, "--log-level", "warning", *setup.options]
                load = Load(url, setup, calls, cap)
                results.setdefault((label, setup.name), []).append(measure(command, env, load))
    floors = {setup.name: setup.floor_of for setup in setups}
    rows: Rows = []
    for (label, name), found in results.items():
        figures = medians(found)
        base = medians(results[label, setups[0].name])
        if base.get("throughput_per_s") and figures.get("throughput_per_s"):
            figures["x_in_memory"] = figures["throughput_per_s"] / base["throughput_per_s"]
        cpu = figures.get("cpu_us_per_call")
        if base.get("cpu_us_per_call") and cpu:
            figures["cpu_x_in_memory"] = cpu / base["cpu_us_per_call"]
            # What one core serves at this CPU per call: the projection's unit.
            figures["calls_per_core_s"] = 1e6 / cpu
        floor = floors.get(name)
        floor_cpu = medians(results[label, floor]).get("cpu_us_per_call") if floor else None
        if floor_cpu and cpu:
            figures["cpu_x_floor"] = cpu / floor_cpu
        rows.append((f"{name} {label}".strip(), figures))
    return rows


@dataclass(frozen=True)
class Load:
    redis_url: str
    setup: Setup
    calls: int
    cap: float
    #: The data nodes whose commands count (one Redis: its own URL).
    nodes: tuple[str, ...] = ()

    @property
    def counted(self) -> tuple[str, ...]:
        return self.nodes or (self.redis_url,)


def measure(command: list[str], env: dict[str, str], load: Load) -> dict[str, Any]:
    shared = "--redis-url" in command
    with contextlib.ExitStack() as servers:
        started = [
            servers.enter_context(http_server(command, {**os.environ, **env}))
            for _ in range(load.setup.replicas)
        ]
        for mcp_url, _, _ in started:
            asyncio.run(_every_worker_ready(mcp_url.removesuffix("/mcp"), load.setup.workers))
        before = asyncio.run(_commands(load.counted)) if shared else 0

        async def together() -> list[dict[str, Any]]:
            each: list[dict[str, Any]] = await asyncio.gather(
                *(
                    http_load.measure(
                        mcp_url,
                        params=ECHO,
                        calls=load.calls // load.setup.replicas,
                        concurrency=load.setup.clients,
                        max_seconds=load.cap,
                        pid=pid,
                        connection_per_session=load.setup.own_connections,
                    )
                    for mcp_url, pid, _ in started
                )
            )
            return each

        figures = _together(asyncio.run(together()))
        if shared:
            made = (
                100 * load.setup.replicas
                + figures["sequential_calls"]
                + figures["concurrent_calls"]
            )
            after = asyncio.run(_commands(load.counted))
            figures["redis_cmds_per_call"] = (after - before) / made
        return figures


def _together(each: list[dict[str, Any]]) -> dict[str, Any]:
    """Side-by-side servers' figures as one's: calls, rates and memory add up, CPU per call
    is their total over all calls, latencies are the mean."""
    if len(each) == 1:
        return each[0]
    calls = sum(f["concurrent_calls"] for f in each)
    merged = {key: sum(f[key] for f in each) for key in each[0] if key != "cpu_us_per_call"}
    for key in ("p50_ms", "p99_ms"):
        merged[key] /= len(each)
    cpu = [f["cpu_us_per_call"] for f in each]
    merged["cpu_us_per_call"] = None
    if None not in cpu and calls:
        merged["cpu_us_per_call"] = (
            sum(c * f["concurrent_calls"] for c, f in zip(cpu, each, strict=True)) / calls
        )
    return merged


async def _every_worker_ready(base: str, workers: int) -> None:
    """The first worker answering is not all of them. A worker still starting has no
    listening socket, so no probe reaches it, and it starts taking connections once it
    listens, still connecting to Redis (503 until then): wait until every worker listens,
    then until each says it is ready (on Redis, each by its replica number)."""
    port = int(base.rsplit(":", 1)[1])
    deadline = time.monotonic() + 60
    while _listening(port) not in (None, workers):
        if time.monotonic() > deadline:
            raise RuntimeError(f"the {workers} workers were not all listening within 60 s")
        await asyncio.sleep(0.05)
    replicas: set[int] = set()
    in_a_row = 0
    connector = aiohttp.TCPConnector(force_close=True)
    async with aiohttp.ClientSession(connector=connector) as http:
        # In memory, nothing to wait for once they listen: a few ready answers suffice.
        while len(replicas) < workers and in_a_row < 8 * workers:
            if time.monotonic() > deadline:
                raise RuntimeError(f"the {workers} workers were not all ready within 60 s")
            async with http.get(f"{base}/readyz") as response:
                status = await response.json()
            if response.status == 200 and status["status"] == "ready":
                in_a_row = 0 if "replica" in status else in_a_row + 1
                replicas.add(status.get("replica", 0))
            else:
                await asyncio.sleep(0.05)


def _listening(port: int) -> int | None:
    """How many sockets listen on this loopback TCP port (Linux's /proc), or None."""
    try:
        tables = [Path(f"/proc/net/{name}").read_text() for name in ("tcp", "tcp6")]
    except OSError:
        return None
    wanted = f":{port:04X}"
    return sum(
        1
        for table in tables
        for line in table.splitlines()[1:]
        if (fields := line.split()) and fields[1].endswith(wanted) and fields[3] == "0A"
    )


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
    first, cached = await asyncio.to_thread(first_and_cached, url)
    return {
        "redis_ping_us_p50": percentile(pings, 0.5) * 1e6,
        "session_load_us_p50": percentile(loads, 0.5) * 1e6,
        "first_call_elsewhere_ms_p50": percentile(first, 0.5) * 1000,
        "cached_call_ms_p50": percentile(cached, 0.5) * 1000,
    }


def first_and_cached(url: str) -> tuple[list[float], list[float]]:
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


#: The row the projection starts from, and the Redis rows whose cost over their floor
#: (the same processes without Redis) it applies to it.
IN_MEMORY = "1 worker, in memory"
PROJECTED = ("2 workers, Redis", "4 workers, Redis")
#: Shown as measured too: 2 crowded cores, so a lower bound.
CROWDED = "4 workers, Redis"


def scale_markdown(label: str, rows: Rows, report: dict[str, Any]) -> tuple[str, str]:
    """specs/scale.md's block for a scale case (today's rows only): its name and text."""
    generated = stamp(report)
    found = {name: figures for name, figures in rows if " @" not in name}
    if label == "Redis round trip":
        trip = found.get("codex-mcp", {})
        return "scale-round-trip", "\n".join(
            [
                generated,
                "| Redis round trip (asyncio client, loopback) | p50 |",
                "|---|---|",
                f"| PING | {trip.get('redis_ping_us_p50', 0):.0f} µs |",
                "| HGETALL of a session (what loading one costs) | "
                f"{trip.get('session_load_us_p50', 0):.0f} µs |",
                "| a session's first call on a replica that must load it | "
                f"{trip.get('first_call_elsewhere_ms_p50', 0):.2f} ms |",
                "| a call on a replica that holds it | "
                f"{trip.get('cached_call_ms_p50', 0):.2f} ms |",
            ]
        )
    lines = [
        generated,
        "| HTTP echo | p50 | calls/s | calls/s x in memory | server CPU per call | CPU x in memory "
        "| CPU x floor | calls/s per core | Redis commands per call |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for name, f in found.items():
        lines.append(
            f"| {name} | {f['p50_ms']:.2f} ms | {f['throughput_per_s']:,.0f} "
            f"| {_shown(f.get('x_in_memory'), '.2f')} "
            f"| {_shown(f.get('cpu_us_per_call'), '.0f', ' µs')} "
            f"| {_shown(f.get('cpu_x_in_memory'), '.2f')} "
            f"| {_shown(f.get('cpu_x_floor'), '.2f')} "
            f"| {_shown(f.get('calls_per_core_s'), ',.0f')} "
            f"| {_shown(f.get('redis_cmds_per_call'), '.2f')} |"
        )
    return "scale-workers", "\n".join([*lines, "", *_projection(found)])


def _projection(found: dict[str, dict[str, Any]]) -> list[str]:
    """Calls/s per core x cores, one worker per core: at one in-memory worker's CPU per
    call, at that times each Redis row's cost over its floor (what a worker with a core of
    its own costs), and at the crowded row's CPU per call as measured here."""
    per_core = found.get(IN_MEMORY, {}).get("calls_per_core_s")
    if not per_core:
        return []
    columns = [(f"{IN_MEMORY} (this run)", per_core)]
    for name in PROJECTED:
        excess = found.get(name, {}).get("cpu_x_floor")
        if excess:
            # Below 1 is the run's noise: a worker costs at least what one process does.
            shown = f"{excess:.2f}" if excess >= 1 else f"{excess:.2f}, taken as 1"
            columns.append(
                (f"{name}: its CPU x floor ({shown}) applied", per_core / max(1.0, excess))
            )
    crowded = found.get(CROWDED, {}).get("calls_per_core_s")
    if crowded:
        columns.append((f"{CROWDED} as measured on 2 crowded cores (a lower bound)", crowded))
    lines = [
        "| cores, one worker each | " + " | ".join(name for name, _ in columns) + " |",
        "|---" * (len(columns) + 1) + "|",
    ]
    for cores in (1, 2, 4, 8, 16):
        cells = [f"{cores * rate:,.0f} calls/s" for _, rate in columns]
        lines.append(f"| {cores} | " + " | ".join(cells) + " |")
    return lines


def _shown(value: float | None, spec: str, unit: str = "") -> str:
    return "-" if value is None else f"{value:{spec}}{unit}"
