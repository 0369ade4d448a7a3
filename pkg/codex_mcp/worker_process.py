"""What `codex-mcp-http --workers N` and each of its workers agree on, outside the settings:
two environment variables the supervisor sets in each worker's environment, and the exit
status by which a worker says "restarting me cannot help". Kept apart from the scale-out
modules so the HTTP entrypoint reads them without importing those."""

from __future__ import annotations

import os
import sys
from typing import Final, NoReturn

#: The worker's index: set, the worker listens with SO_REUSEPORT on its parent's port.
WORKER_ENV: Final = "CODEX_MCP_WORKER_INDEX"
#: The descriptor of the pipe from the worker's supervisor. The worker reads the
#: supervisor's requestState key from it and exits when it reaches its end (the
#: supervisor died: no worker serves the port unsupervised).
WORKER_LINK_ENV: Final = "CODEX_MCP_WORKER_LINK"
#: A worker's exit status for a configuration error that restarting cannot fix (EX_CONFIG,
#: sysexits.h): its supervisor stops instead of restarting it.
CONFIG_ERROR_STATUS: Final = 78


def in_worker() -> bool:
    """Is this process a worker of `codex-mcp-http --workers N`?"""
    return os.environ.get(WORKER_ENV) is not None


def config_error(message: str) -> NoReturn:
    """Exit with one line and EX_CONFIG: a supervisor (--workers) does not restart it."""
    print(message, file=sys.stderr, flush=True)
    raise SystemExit(CONFIG_ERROR_STATUS)
