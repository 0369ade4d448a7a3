"""Figures: percentiles, and a server process's CPU time and memory from /proc."""

from __future__ import annotations

import os
from dataclasses import dataclass


def percentile(samples: list[float], fraction: float) -> float:
    if not samples:
        return float("nan")
    ordered = sorted(samples)
    index = min(len(ordered) - 1, max(0, round(fraction * (len(ordered) - 1))))
    return ordered[index]


@dataclass(slots=True)
class ProcessSample:
    cpu_seconds: float
    rss_bytes: int


def sample_process(pid: int) -> ProcessSample | None:
    """CPU (user+system) and RSS of a process and its children, or None off Linux."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii") as stat:
            fields = stat.read().rsplit(")", 1)[1].split()
        with open(f"/proc/{pid}/status", encoding="ascii") as status:
            rss_kb = next(int(line.split()[1]) for line in status if line.startswith("VmRSS:"))
    except (OSError, StopIteration, IndexError):
        return None
    ticks = os.sysconf("SC_CLK_TCK")
    # utime, stime, cutime, cstime are fields 14-17 (1-based) of /proc/PID/stat.
    cpu = sum(int(value) for value in fields[11:15]) / ticks
    return ProcessSample(cpu, rss_kb * 1024)
