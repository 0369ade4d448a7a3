"""A worker's end of the link (a socket pair) its `--workers` supervisor holds open: the
requestState key the workers share, the workers' status for `/readyz`, the word that this
worker listens, and the end that says the supervisor is gone (specs/scale.md, "--workers N")."""

from __future__ import annotations

import io
import logging
import os
import signal
import threading
import time
from dataclasses import dataclass
from typing import Any, Final

import orjson

from ..worker_process import WORKER_LINK_ENV

log = logging.getLogger("codex_mcp.workers")

#: What a worker says on its link once it listens (only then is it counted as serving).
LISTENING: Final = b"listening\n"
#: Beyond the shutdown timeout, how long a graceful stop may take before the worker exits.
_EXIT_MARGIN: Final = 10.0


@dataclass
class SupervisorLink:
    """A worker's view of its supervisor: the key it handed down, and the latest word on
    the workers (read by `/readyz`)."""

    key: str | None
    fd: int = -1
    workers: dict[str, Any] | None = None

    def status(self) -> dict[str, Any] | None:
        return self.workers

    def listening(self) -> None:
        """Tell the supervisor this worker listens (it counts it as serving from now)."""
        try:
            os.write(self.fd, LISTENING)
        except OSError as exc:  # the supervisor is gone: the watch stops this worker
            log.debug("could not tell the supervisor this worker listens: %s", exc)


def join_supervisor(shutdown_timeout: float) -> SupervisorLink | None:
    """In a worker: the link to the supervisor, watched from now on. None outside one."""
    raw = os.environ.pop(WORKER_LINK_ENV, None)
    if raw is None:
        return None
    fd = int(raw)
    os.set_inheritable(fd, False)
    # One byte at a time (a raw file): what follows the line is the watch's to read.
    key = io.FileIO(fd, closefd=False).readline().decode("ascii", "replace").strip()
    link = SupervisorLink(key or None, fd)
    threading.Thread(
        target=_watch, args=(fd, link, shutdown_timeout), name="supervisor-link", daemon=True
    ).start()
    return link


def _read(fd: int) -> bytes:
    """The next bytes from the supervisor; b"" once it is gone (closed, or reset: a socket
    pair closed with what we said unread resets rather than ends)."""
    try:
        return os.read(fd, 4096)
    except OSError:
        return b""


def _watch(fd: int, link: SupervisorLink, shutdown_timeout: float) -> None:
    pending = b""
    while chunk := _read(fd):
        *lines, pending = (pending + chunk).split(b"\n")
        for line in lines:
            try:
                status = orjson.loads(line)
            except orjson.JSONDecodeError:
                continue
            if isinstance(status, dict):
                link.workers = status
    log.warning(
        "the --workers supervisor is gone; worker pid %d stops serving (nothing would "
        "restart it or stop it any more)",
        os.getpid(),
    )
    os.kill(os.getpid(), signal.SIGTERM)
    time.sleep(shutdown_timeout + _EXIT_MARGIN)
    os._exit(1)  # the graceful stop hung: do not stay behind on the port


__all__ = ["SupervisorLink", "join_supervisor"]
