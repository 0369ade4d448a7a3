"""The gateway's cases of the benchmark suite (bench/run.py) beyond the echo case every server
runs: the echo case again on one core, and results of 1, 10 and
50 MB from the same child (our server's `blob` tool) called directly, through the relay floor
and through codex-mcp as a gateway, in one run. What counts is that each is linear in the
size: `x_per_mb_largest` is the time per MB of the largest result over that of the smallest
(about 1, or below where a call's fixed cost shows at 1 MB; far above 1 is a quadratic
buffer somewhere on the path), and `x_cpu_per_mb_largest` the same by CPU against 10 MB
(steadier than wall time on a shared machine). `peak_rss_mb_N` is the server's and its
child's peak RSS (each one's VmHWM, added) once N MB results were relayed, and
`rss_mb_after_N` their RSS after those calls."""

from __future__ import annotations

import asyncio
import contextlib
import os
import statistics
import sys
import time
from collections.abc import Iterator, Sequence
from typing import Any

import orjson
from codex_mcp.bench import stdio_load
from codex_mcp.bench.stats import sample_process
from harness import ECHO, medians

MB = 1_000_000
#: Calls timed at each size (after one that warms up), fewer for the larger ones.
CALLS_AT = {1: 10, 10: 5, 50: 3}
Rows = list[tuple[str, dict[str, Any]]]


async def _timed_calls(
    command: Sequence[str], env: dict[str, str], sizes: Sequence[int]
) -> dict[str, Any]:
    """One server process: each size called once to warm up, then timed one call at a time."""
    peer, _ = await stdio_load.spawn(list(command), env)
    figures: dict[str, Any] = {}
    try:
        pid = peer.process.pid
        for size in sizes:
            params = {"name": "blob", "arguments": {"size": size * MB}}
            await _call(peer, params, size)
            before = sample_process(pid)
            times = []
            for _ in range(CALLS_AT[size]):
                started = time.perf_counter()
                await _call(peer, params, size)
                times.append(time.perf_counter() - started)
            after = sample_process(pid)
            figures[f"ms_{size}mb"] = statistics.median(times) * 1000
            if before and after:
                cpu = (after.cpu_seconds - before.cpu_seconds) / len(times)
                figures[f"cpu_ms_{size}mb"] = cpu * 1000
            if after:  # sizes go up, so the peak so far is this size's
                figures[f"peak_rss_mb_{size}mb"] = after.peak_rss_bytes / 1e6
                figures[f"rss_mb_after_{size}mb"] = after.rss_bytes / 1e6
        last = sample_process(pid)
        if last is not None:
            figures["rss_mb"] = last.rss_bytes / 1e6
    finally:
        await stdio_load.close(peer.process)
    smallest, largest = sizes[0], sizes[-1]
    per_mb_small = figures[f"ms_{smallest}mb"] / smallest
    figures[f"mb_per_s_{largest}mb"] = largest / (figures[f"ms_{largest}mb"] / 1000)
    figures["x_per_mb_largest"] = figures[f"ms_{largest}mb"] / largest / per_mb_small
    if largest > 10 and figures.get("cpu_ms_10mb") and figures.get(f"cpu_ms_{largest}mb"):
        # The same by CPU (the server's and its child's), against 10 MB: the first size
        # whose CPU the 10 ms clock tick resolves. Wall time swings on a loaded machine.
        per_mb_10 = figures["cpu_ms_10mb"] / 10
        figures["x_cpu_per_mb_largest"] = figures[f"cpu_ms_{largest}mb"] / largest / per_mb_10
    return figures


async def _call(peer: stdio_load.StdioPeer, params: dict[str, Any], size: int) -> None:
    peer.send("tools/call", params)
    reply = await peer.response()
    text = reply.get("result", {}).get("content", [{}])[0].get("text", "")
    if len(text) != size * MB:
        raise RuntimeError(f"a {size} MB call came back with {orjson.dumps(reply)[:200]!r}")


def large_results(servers: Sequence[tuple[str, list[str], dict[str, str]]], *, quick: bool) -> Rows:
    """Each (name, command, extra env) server through every size; ratios to the relay floor."""
    sizes = (1, 10) if quick else (1, 10, 50)
    rows: Rows = []
    for name, command, extra in servers:
        print(f"  stdio gateway large results: {name} ...", file=sys.stderr, flush=True)
        env = {**os.environ, **extra, "CODEX_MCP_BENCH_TOOLS": "1"}
        try:
            rows.append((name, asyncio.run(_timed_calls(command, env, sizes))))
        except Exception as exc:  # reported, not fatal, like every other case
            print(f"    skipped {name}: {exc}", file=sys.stderr)
    floor = dict(rows).get("relay floor")
    if floor:
        largest = sizes[-1]
        for _, figures in rows:
            figures["x_relay_floor_time"] = figures[f"ms_{largest}mb"] / floor[f"ms_{largest}mb"]
    return rows


#: The echo case with the load generator, the relay (or nothing: "direct") and its child on
#: one core: issue 38 asks the gateway for 0.9 of the relay floor's throughput there.
ONE_CORE = "stdio gateway echo on one core"


@contextlib.contextmanager
def on_one_core() -> Iterator[None]:
    """This process, and what it starts meanwhile, on one core (its last allowed one)."""
    allowed = os.sched_getaffinity(0)
    os.sched_setaffinity(0, {max(allowed)})
    try:
        yield
    finally:
        os.sched_setaffinity(0, allowed)


def one_core(
    servers: Sequence[tuple[str, list[str], dict[str, str]]], *, rounds: int, calls: int = 20000
) -> Rows:
    """Each (name, command, env) server's echo throughput with the three processes taking turns
    on one core, the servers run in turn, round after round (a change of the machine's load
    then falls on all alike). `core_cpu_us_per_call` is what all three spend per call (the
    load generator's CPU, the relay's and its child's); `x_relay_floor` and
    `x_relay_floor_cpu` are the medians of each round's ratio to the relay floor's throughput
    and CPU per call (the floor's over the row's): other work on the machine takes turns on
    that core too, and moves the CPU less than the throughput. `x_relay_floor_server_cpu`
    leaves the load generator out (the relay's and its child's CPU alone: their throughput
    on a core of their own, the load generator on another)."""
    runs: list[dict[str, dict[str, Any]]] = []
    with on_one_core():
        for _ in range(rounds):
            done: dict[str, dict[str, Any]] = {}
            for name, command, env in servers:
                print(f"  {ONE_CORE}: {name} ...", file=sys.stderr, flush=True)
                try:
                    figures = asyncio.run(
                        stdio_load.measure(
                            command, params=ECHO, sequential=100, calls=calls, env=env
                        )
                    )
                except Exception as exc:  # reported, not fatal, like every other case
                    print(f"    skipped {name}: {exc}", file=sys.stderr)
                    continue
                figures["core_cpu_us_per_call"] = (
                    figures["cpu_us_per_call"] + figures["client_cpu_us_per_call"]
                )
                done[name] = figures
            runs.append(done)
    rows: Rows = []
    for name, _, _ in servers:
        each = [done[name] for done in runs if name in done]
        if not each:
            continue
        figures = medians(each)
        pairs = [
            (done[name], done["relay floor"]) for done in runs if {name, "relay floor"} <= set(done)
        ]
        if pairs:
            figures["x_relay_floor"] = statistics.median(
                row["throughput_per_s"] / floor["throughput_per_s"] for row, floor in pairs
            )
            for key, by in (("x_relay_floor_cpu", "core_cpu_us_per_call"),
                            ("x_relay_floor_server_cpu", "cpu_us_per_call")):  # fmt: skip
                figures[key] = statistics.median(floor[by] / row[by] for row, floor in pairs)
        rows.append((name, figures))
    return rows
