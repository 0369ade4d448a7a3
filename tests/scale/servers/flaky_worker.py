"""A server whose `--workers` workers die at start while a marker file names their index
(CODEX_MCP_WORKER_INDEX), as a worker in a crash loop would; the others serve."""

from __future__ import annotations

import os
from pathlib import Path

from codex_mcp import Server

_marker = Path(os.environ["FLAKY_MARKER"])
if _marker.exists() and os.environ.get("CODEX_MCP_WORKER_INDEX") in _marker.read_text().split():
    raise SystemExit(3)

server = Server("flaky")
PID = str(os.getpid())


@server.tool(read_only=True)
def whoami() -> str:
    return PID
