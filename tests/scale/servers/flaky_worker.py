"""A server whose `--workers` workers die at start while a marker file names their index
(CODEX_MCP_WORKER_INDEX), as a worker in a crash loop would; the others serve. A worker
whose index the FLAKY_HANG file names hangs before it listens (while the file exists)."""

from __future__ import annotations

import os
import time
from pathlib import Path

from codex_mcp import Server

_index = os.environ.get("CODEX_MCP_WORKER_INDEX")
_marker = Path(os.environ["FLAKY_MARKER"])
if _marker.exists() and _index in _marker.read_text().split():
    raise SystemExit(3)
_hang = Path(os.environ.get("FLAKY_HANG", "/nonexistent"))
while _hang.exists() and _index in _hang.read_text().split():
    time.sleep(0.1)

server = Server("flaky")
PID = str(os.getpid())


@server.tool(read_only=True)
def whoami() -> str:
    return PID
