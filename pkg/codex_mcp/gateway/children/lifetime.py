"""No child outlives the gateway, even a SIGKILLed one: PR_SET_PDEATHSIG, process groups and
a watchdog (specs/gateway.md, "No child outlives the gateway")."""

from __future__ import annotations

import contextlib
import ctypes
import logging
import os
import signal
import subprocess
import sys
from collections.abc import Callable

log = logging.getLogger("codex_mcp.gateway")

_PR_SET_PDEATHSIG = 1
PR_SET_CHILD_SUBREAPER, PR_GET_CHILD_SUBREAPER = 36, 37

# Reads "+PGID" and "-PGID" lines until end of file, then kills the groups still listed.
# It ignores the signals a terminal or a supervisor sends to our process group.
WATCHDOG_SCRIPT = """
trap '' INT TERM HUP QUIT
groups=' '
while IFS= read -r line; do
  case $line in
    +*) groups="$groups${line#+} " ;;
    -*) drop=${line#-}; kept=' '
        for g in $groups; do [ "$g" = "$drop" ] || kept="$kept$g "; done
        groups=$kept ;;
  esac
done
[ "$groups" = ' ' ] && exit 0
for g in $groups; do kill -s TERM -- "-$g" 2>/dev/null; done
sleep 1
for g in $groups; do kill -s KILL -- "-$g" 2>/dev/null; done
exit 0
"""


def _load_prctl() -> Callable[..., int] | None:
    if not sys.platform.startswith("linux"):
        return None
    try:  # the interpreter's own symbols hold libc's (find_library runs `ldconfig -p`)
        libc = ctypes.CDLL(None, use_errno=True)
        prctl: Callable[..., int] = libc.prctl
    except (OSError, AttributeError):
        return None
    return prctl


#: libc's prctl (Linux), else None.
prctl = _load_prctl()


def die_with_parent() -> Callable[[], None] | None:
    """A preexec_fn that has the kernel SIGKILL the child when this process dies (Linux),
    or None where the kernel cannot."""
    if prctl is None:
        return None
    set_option = prctl
    parent = os.getpid()

    def preexec() -> None:
        set_option(_PR_SET_PDEATHSIG, signal.SIGKILL)
        if os.getppid() != parent:  # we died between fork and prctl: nobody would kill it
            os.kill(os.getpid(), signal.SIGKILL)

    return preexec


def adopt_orphans() -> None:
    """Have orphans among our descendants come to us, not init (Linux): a child's `setsid`
    or double-forked leftovers stay where reaper.py finds them."""
    if prctl is not None:
        prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)


def kill_group(pgid: int, sig: int = signal.SIGKILL) -> None:
    """Signal a child's whole process group (what it started too); gone is fine."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, sig)


class Watchdog:
    """The `sh` process that kills our children's process groups when we die."""

    def __init__(self) -> None:
        self._process: subprocess.Popen[bytes] | None = None
        self._failed = False

    def _pipe(self) -> int | None:
        if self._process is None and not self._failed and os.name == "posix":
            try:
                self._process = subprocess.Popen(
                    ["/bin/sh", "-c", WATCHDOG_SCRIPT],
                    stdin=subprocess.PIPE,
                    stdout=subprocess.DEVNULL,
                    stderr=subprocess.DEVNULL,
                    start_new_session=True,  # a signal to our group must not stop it
                    close_fds=True,
                )
            except OSError as exc:
                self._failed = True
                log.warning("no watchdog for child process groups: %s", exc)
        process = self._process
        return process.stdin.fileno() if process is not None and process.stdin else None

    def _tell(self, line: str) -> None:
        fd = self._pipe()
        if fd is not None:
            with contextlib.suppress(OSError):  # a few bytes: never blocks on a pipe
                os.write(fd, line.encode())

    def watch(self, pgid: int) -> None:
        self._tell(f"+{pgid}\n")

    def forget(self, pgid: int) -> None:
        self._tell(f"-{pgid}\n")

    def close(self) -> None:
        """We are stopping normally (children already stopped and forgotten): it reads end
        of file and exits at once; reap it if it has, else init will."""
        process, self._process = self._process, None
        if process is not None and process.stdin is not None:
            with contextlib.suppress(OSError):
                process.stdin.close()
            with contextlib.suppress(subprocess.TimeoutExpired):
                process.wait(0.2)
