"""Figures: percentiles, and a server process's CPU time and memory from /proc."""

from __future__ import annotations

import os
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any


def percentile(samples: list[float], fraction: float) -> float:
    if not samples:
        return float("nan")
    ordered = sorted(samples)
    index = min(len(ordered) - 1, max(0, round(fraction * (len(ordered) - 1))))
    return ordered[index]


async def timed_one_at_a_time(
    call: Callable[[], Awaitable[dict[str, Any]]], count: int, deadline: float
) -> dict[str, Any]:
    """Latency: up to 100 calls to warm up, then `count` timed ones (until `deadline`, a
    `time.perf_counter()`), one at a time; an error answer stops the measurement."""
    for _ in range(min(100, count)):
        await call()
    latencies = []
    for _ in range(count):
        started = time.perf_counter()
        reply = await call()
        latencies.append(time.perf_counter() - started)
        if "error" in reply:
            raise RuntimeError(f"the server answered an error: {reply['error']}")
        if time.perf_counter() > deadline:
            break
    return {
        "p50_ms": percentile(latencies, 0.5) * 1000,
        "p99_ms": percentile(latencies, 0.99) * 1000,
        "sequential_calls": len(latencies),
    }


def cpu_us_per(
    before: ProcessSample | None, after: ProcessSample | None, count: int
) -> float | None:
    """Microseconds of the server's CPU per unit of work between two samples."""
    if before is None or after is None or not count:
        return None
    return (after.cpu_seconds - before.cpu_seconds) / count * 1e6


@dataclass(slots=True)
class ProcessSample:
    cpu_seconds: float
    rss_bytes: int
    #: The highest RSS so far (VmHWM): of several processes, the sum of each one's peak.
    peak_rss_bytes: int = 0


def _descendants(pid: int) -> list[int]:
    """Live children, grandchildren... of a process (a supervisor's workers)."""
    found: list[int] = []
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return found
    for task in tasks:
        try:
            with open(f"/proc/{pid}/task/{task}/children", encoding="ascii") as children:
                for child in children.read().split():
                    found.append(int(child))
                    found.extend(_descendants(int(child)))
        except OSError:
            continue
    return found


def _sample_one(pid: int) -> ProcessSample | None:
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii") as stat:
            fields = stat.read().rsplit(")", 1)[1].split()
        with open(f"/proc/{pid}/status", encoding="ascii") as status:
            memory = {
                line[:6]: int(line.split()[1])
                for line in status
                if line.startswith(("VmRSS:", "VmHWM:"))
            }
        rss_kb, peak_kb = memory["VmRSS:"], memory["VmHWM:"]
    except (OSError, KeyError, IndexError, ValueError):
        return None
    ticks = os.sysconf("SC_CLK_TCK")
    # utime, stime, cutime, cstime are fields 14-17 (1-based) of /proc/PID/stat: the
    # reaped children's from there, the process's own to the nanosecond when schedstat
    # has it (stat counts 10 ms ticks: 5% of a phase of 0.2 s).
    own = schedstat_seconds(pid)
    if own is None:
        own = sum(int(value) for value in fields[11:13]) / ticks
    cpu = own + sum(int(value) for value in fields[13:15]) / ticks
    return ProcessSample(cpu, rss_kb * 1024, peak_kb * 1024)


def schedstat_seconds(pid: int) -> float | None:
    """The CPU a live process's threads have run, from their schedstat."""
    total = 0
    try:
        for task in os.listdir(f"/proc/{pid}/task"):
            with open(f"/proc/{pid}/task/{task}/schedstat", encoding="ascii") as stat:
                total += int(stat.read().split()[0])
    except (OSError, ValueError, IndexError):
        return None
    return total / 1e9


def sample_process(pid: int) -> ProcessSample | None:
    """CPU (user+system) and RSS of a process and its descendants (live and reaped), or
    None off Linux."""
    total = _sample_one(pid)
    if total is None:
        return None
    for child in _descendants(pid):
        sample = _sample_one(child)
        if sample is not None:
            total = ProcessSample(
                total.cpu_seconds + sample.cpu_seconds,
                total.rss_bytes + sample.rss_bytes,
                total.peak_rss_bytes + sample.peak_rss_bytes,
            )
    return total
