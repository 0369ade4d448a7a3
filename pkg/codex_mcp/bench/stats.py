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
    # utime, stime, cutime, cstime are fields 14-17 (1-based) of /proc/PID/stat.
    cpu = sum(int(value) for value in fields[11:15]) / ticks
    return ProcessSample(cpu, rss_kb * 1024, peak_kb * 1024)


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
