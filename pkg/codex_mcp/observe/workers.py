"""Metrics across `--workers N`: one multiprocess directory for every worker
(specs/observability.md, "Metrics": --workers)."""

from __future__ import annotations

import os
import shutil
import tempfile
from typing import Final

MULTIPROC_ENV: Final = "PROMETHEUS_MULTIPROC_DIR"


class SharedMetrics:
    def __init__(self) -> None:
        given = os.environ.get(MULTIPROC_ENV)
        self.owned = not given  # a directory the operator chose is theirs to clean
        self.path = given or tempfile.mkdtemp(prefix="codex-mcp-metrics-")

    def env(self) -> dict[str, str]:
        return {MULTIPROC_ENV: self.path}

    def exited(self, pid: int) -> None:
        """A worker is gone: its live gauges stop counting."""
        from prometheus_client import multiprocess

        multiprocess.mark_process_dead(pid, self.path)  # type: ignore[no-untyped-call]

    def close(self) -> None:
        if self.owned:
            shutil.rmtree(self.path, ignore_errors=True)
