"""What is running, read from /proc: the processes of a group, their memory, the children
of a process. (The npm `codex` is a Node wrapper whose native app-server is its child, in
the same process group.)"""

from __future__ import annotations

import asyncio
import os
from pathlib import Path


def _stat(pid: int) -> tuple[str, int, int] | None:
    """(state, ppid, pgrp) of a live process, or None."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = text[text.rindex(")") + 2 :].split()
    return fields[0], int(fields[1]), int(fields[2])


def _pids() -> list[int]:
    return [int(name) for name in os.listdir("/proc") if name.isdigit()]


def group(pgid: int) -> list[int]:
    """The live (not zombie) processes of a process group."""
    found = []
    for pid in _pids():
        stat = _stat(pid)
        if stat is not None and stat[2] == pgid and stat[0] != "Z":
            found.append(pid)
    return found


def children(pid: int) -> list[int]:
    """Direct children of `pid` that are alive (not zombies)."""
    found = []
    for each in _pids():
        stat = _stat(each)
        if stat is not None and stat[1] == pid and stat[0] != "Z":
            found.append(each)
    return found


def _kib(path: str, key: str) -> int:
    try:
        for line in Path(path).read_text().splitlines():
            if line.startswith(key):
                return int(line.split()[1])
    except OSError:
        pass
    return 0


def rss_kib(pid: int) -> int:
    return _kib(f"/proc/{pid}/status", "VmRSS:")


def uss_kib(pid: int) -> int:
    """Unique set size: the pages only this process has, what stopping it gives back."""
    path = f"/proc/{pid}/smaps_rollup"
    return _kib(path, "Private_Clean:") + _kib(path, "Private_Dirty:")


def pss_kib(pid: int) -> int:
    """Proportional set size: shared pages (the same binaries in every app-server) are
    split between the processes sharing them, so this is what one more costs."""
    return _kib(f"/proc/{pid}/smaps_rollup", "Pss:")


async def group_ends(pgid: int, timeout: float = 15) -> None:
    """Wait until no process of the group is left (the server's stop is asynchronous and
    gives no signal a test can hold from outside its process)."""
    async with asyncio.timeout(timeout):
        while group(pgid):
            await asyncio.sleep(0.05)
