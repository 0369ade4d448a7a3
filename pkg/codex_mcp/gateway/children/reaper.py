"""What a stdio child started outside its process group (`setsid`, a daemon), stopped with it
(Linux; specs/gateway.md, "No child outlives the gateway").

A child's process group does not hold a process that called `setsid`, nor a daemon that
forked twice. So the gateway process is its children's *subreaper*
(`PR_SET_CHILD_SUBREAPER`): an orphan among their descendants comes to it instead of init,
and stays where it can be found. Which child an orphan came from is told by the tag each
child gets in its environment (`CODEX_MCP_GATEWAY_CHILD`, one value per process started,
inherited by what it starts). When a child stops, whichever way, `Lineage` stops:

- what is in its process tree right before it is stopped (read from /proc), and
- the gateway's own children carrying its tag (orphans it adopted), with their trees.

Only the gateway's descendants are looked at: a process elsewhere carrying a tag is not
ours. Each is held by a pidfd (a pid reused meanwhile is never signalled), sent SIGTERM,
then SIGKILL, and reaped. An orphan that exits by itself while its child serves is reaped
by a sweep every few seconds. Every process the gateway starts itself leads its own session
(children and the watchdog alike): a zombie that does not is an adopted one.
"""

from __future__ import annotations

import asyncio
import contextlib
import ctypes
import logging
import os
import select
import signal
from collections.abc import Collection
from dataclasses import dataclass
from pathlib import Path

from ..config.load import CHILD_ENV
from .lifetime import PR_GET_CHILD_SUBREAPER, prctl

log = logging.getLogger("codex_mcp.gateway")

_SWEEP_SECONDS = 2.0
_TERM_GRACE = 0.5
_KILL_GRACE = 1.0
_TAG = CHILD_ENV.encode() + b"="


@dataclass(frozen=True, slots=True)
class _Proc:
    pid: int
    ppid: int
    sid: int
    state: str
    #: Its start time (clock ticks since boot): with the pid, which process it is.
    start: int


def _stat(pid: int) -> _Proc | None:
    try:
        text = Path(f"/proc/{pid}/stat").read_bytes()
    except OSError:
        return None
    fields = text[text.rindex(b")") + 2 :].split()  # the name may hold spaces and parens
    try:
        return _Proc(pid, int(fields[1]), int(fields[3]), fields[0].decode(), int(fields[19]))
    except (IndexError, ValueError):
        return None


#: Whether /proc lists each thread's children (CONFIG_PROC_CHILDREN); else all of /proc is read.
_LISTS_CHILDREN = os.path.exists(f"/proc/self/task/{os.getpid()}/children")


def _children(pid: int) -> list[int]:
    """`pid`'s children (none: gone, or /proc lists none), from its threads' lists or, where
    /proc keeps no such list, from all of /proc."""
    if not _LISTS_CHILDREN:
        return [p for p in map(int, filter(str.isdigit, os.listdir("/proc"))) if _ppid(p) == pid]
    pids: list[int] = []
    with contextlib.suppress(OSError):  # gone
        for task in os.listdir(f"/proc/{pid}/task"):
            with contextlib.suppress(OSError):  # that thread ended meanwhile
                pids += map(int, Path(f"/proc/{pid}/task/{task}/children").read_text().split())
    return pids


def _ppid(pid: int) -> int | None:
    proc = _stat(pid)
    return proc.ppid if proc is not None else None


def _tag(pid: int) -> str | None:
    """The gateway tag in a process's environment (None: none, or not readable)."""
    try:
        environ = Path(f"/proc/{pid}/environ").read_bytes()
    except OSError:
        return None
    for entry in environ.split(b"\0"):
        if entry.startswith(_TAG):
            return entry[len(_TAG) :].decode(errors="replace")
    return None


def _subtrees(roots: list[int]) -> list[_Proc]:
    """The roots and every process under them (read from the roots down: what the stop
    reads grows with the child's descendants, not with the machine's processes)."""
    found, todo, seen = [], list(roots), set()
    while todo:
        pid = todo.pop()
        if pid in seen or (proc := _stat(pid)) is None:
            continue
        seen.add(pid)
        found.append(proc)
        todo += _children(pid)
    return found


def _hold(proc: _Proc) -> int | None:
    """A pidfd for exactly this process (None: gone, or the pid is someone else's now)."""
    try:
        pidfd = os.pidfd_open(proc.pid)
    except OSError:
        return None
    now = _stat(proc.pid)
    if now is None or now.start != proc.start:
        os.close(pidfd)
        return None
    return pidfd


def _reap(pid: int) -> None:
    with contextlib.suppress(ChildProcessError):
        os.waitpid(pid, os.WNOHANG)


def _adopting() -> bool:
    """Whether this process is a subreaper (lifetime.adopt_orphans: the gateway's command
    line makes it one; a library user's process stays as it was)."""
    flag = ctypes.c_int(0)
    return (
        prctl is not None
        and prctl(PR_GET_CHILD_SUBREAPER, ctypes.byref(flag)) == 0
        and flag.value == 1
    )


class Reaper:
    """The process-wide part: the children being watched (by tag), and the orphans seen
    with their tag, reaped when they exit."""

    def __init__(self) -> None:
        self.lineages: dict[str, Lineage] = {}
        #: (pid, start) of adopted orphans seen running with a watched child's tag.
        self.orphans: set[tuple[int, int]] = set()
        self._sweeping: asyncio.TimerHandle | None = None

    def watch(self, lineage: Lineage) -> None:
        if lineage.tag is not None:
            self.lineages[lineage.tag] = lineage
        if self._sweeping is None and _adopting():
            self._sweeping = asyncio.get_running_loop().call_later(_SWEEP_SECONDS, self._sweep)

    def _sweep(self) -> None:
        self.sweep()
        loop = asyncio.get_running_loop()
        again = self.lineages or self.orphans
        self._sweeping = loop.call_later(_SWEEP_SECONDS, self._sweep) if again else None

    def sweep(self) -> None:
        """Reap adopted orphans that exited; note the running ones that carry a tag."""
        children = {lineage.pid for lineage in self.lineages.values()}
        for pid in _children(os.getpid()):
            proc = _stat(pid)
            if proc is None or pid in children:
                continue
            known = (pid, proc.start)
            if proc.state == "Z":
                if proc.sid != pid or known in self.orphans:  # never one we started
                    self.orphans.discard(known)
                    _reap(pid)
            elif known not in self.orphans and _tag(pid) in self.lineages:
                self.orphans.add(known)


#: This process's reaper (a subreaper is a property of the process).
REAPER = Reaper()


class Lineage:
    """One stdio child and what it started: made once it runs, stopped with it."""

    def __init__(self, pid: int, reaper: Reaper = REAPER) -> None:
        self.pid = pid
        self.reaper = reaper
        proc = _stat(pid)
        self._start = proc.start if proc is not None else None
        self.tag = _tag(pid)
        self._held: dict[int, int] = {}  # pid -> pidfd
        reaper.watch(self)

    def catch(self) -> None:
        """Right before the child is stopped: hold everything under it."""
        child = _stat(self.pid)
        if child is None or child.start != self._start:
            return  # gone already: its orphans are found by their tag
        self._hold_all(_subtrees([self.pid]))

    def _hold_all(self, procs: list[_Proc]) -> None:
        for proc in procs:
            if proc.pid != self.pid and proc.pid not in self._held:
                pidfd = _hold(proc)
                if pidfd is not None:
                    self._held[proc.pid] = pidfd

    async def stop(self) -> None:
        """Once the child is gone: stop what it started (held, or adopted with its tag)."""
        if self.reaper.lineages.get(self.tag or "") is self:
            del self.reaper.lineages[self.tag or ""]
        if self.tag is not None:
            ours = _children(os.getpid())
            adopted = [pid for pid in ours if pid != self.pid and _tag(pid) == self.tag]
            self._hold_all(_subtrees(adopted))
        held, self._held = self._held, {}
        if not held:
            return
        pidfds = held.values()
        try:
            for sig, grace in ((signal.SIGTERM, _TERM_GRACE), (signal.SIGKILL, _KILL_GRACE)):
                for pidfd in _running(pidfds):
                    with contextlib.suppress(OSError):
                        signal.pidfd_send_signal(pidfd, sig)
                await _until_ended(pidfds, grace)
            log.debug("child %d: stopped %d process(es) it had started", self.pid, len(held))
            # Reaped once all have exited: an orphan of one of them is ours by then.
            for pidfd in pidfds:
                with contextlib.suppress(ChildProcessError):  # WNOHANG: never blocks
                    os.waitid(os.P_PIDFD, pidfd, os.WEXITED | os.WNOHANG)  # noqa: ASYNC222
            self.reaper.orphans = {o for o in self.reaper.orphans if o[0] not in held}
        finally:
            for pidfd in pidfds:
                os.close(pidfd)


def _running(pidfds: Collection[int]) -> list[int]:
    """Those of the pidfds whose process has not exited (a pidfd polls readable at exit)."""
    poll = select.poll()
    for fd in pidfds:
        poll.register(fd, select.POLLIN)
    ended = {fd for fd, _ in poll.poll(0)}
    return [fd for fd in pidfds if fd not in ended]


async def _until_ended(pidfds: Collection[int], grace: float) -> None:
    """Until every process has exited, or `grace` seconds have passed."""
    loop = asyncio.get_running_loop()
    running = _running(pidfds)
    exits = [loop.create_future() for _ in running]

    def exited(pidfd: int, ended: asyncio.Future[None]) -> None:
        loop.remove_reader(pidfd)
        if not ended.done():
            ended.set_result(None)

    for pidfd, ended in zip(running, exits, strict=True):
        loop.add_reader(pidfd, exited, pidfd, ended)
    try:
        if exits:
            await asyncio.wait(exits, timeout=grace)
    finally:
        for pidfd in running:
            loop.remove_reader(pidfd)
