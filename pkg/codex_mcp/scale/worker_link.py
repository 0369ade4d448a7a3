"""A worker's end of the pipe its `--workers` supervisor holds open.

The supervisor writes one line down the pipe before starting the worker: the
requestState key its workers share when none is configured (a pipe, not the
environment, so the processes a worker starts never see it). The worker then watches
the pipe in a thread: its end means the supervisor is gone, even SIGKILLed, and nothing
would restart this worker or pass it SIGTERM, so it shuts down as on SIGTERM rather than
serve the port unsupervised. This works wherever pipes do, unlike a parent-death signal.
"""

from __future__ import annotations

import logging
import os
import signal
import threading
import time
from typing import Final

from ..defaults import WORKER_LINK_ENV

log = logging.getLogger("codex_mcp.workers")

#: Beyond the shutdown timeout, how long a graceful stop may take before the worker exits.
_EXIT_MARGIN: Final = 10.0


def join_supervisor(shutdown_timeout: float) -> str | None:
    """In a worker: the supervisor's key, and a watch on the supervisor from now on.
    None outside a worker (or when the supervisor sent no key)."""
    raw = os.environ.pop(WORKER_LINK_ENV, None)
    if raw is None:
        return None
    fd = int(raw)
    os.set_inheritable(fd, False)
    key = _read_line(fd)
    threading.Thread(
        target=_watch, args=(fd, shutdown_timeout), name="supervisor-link", daemon=True
    ).start()
    return key or None


def _read_line(fd: int) -> str:
    line = bytearray()
    while not line.endswith(b"\n"):
        chunk = os.read(fd, 1)
        if not chunk:  # the supervisor died already: the watch sees the end too
            break
        line += chunk
    return line.decode("ascii", "replace").strip()


def _watch(fd: int, shutdown_timeout: float) -> None:
    while os.read(fd, 4096):
        pass
    log.warning(
        "the --workers supervisor is gone; worker pid %d stops serving (nothing would "
        "restart it or stop it any more)",
        os.getpid(),
    )
    os.kill(os.getpid(), signal.SIGTERM)
    time.sleep(shutdown_timeout + _EXIT_MARGIN)
    os._exit(1)  # the graceful stop hung: do not stay behind on the port


__all__ = ["join_supervisor"]
