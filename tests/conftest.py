"""Fixtures shared across the suite."""

from __future__ import annotations

import re
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import IO

import pytest

ROOT = Path(__file__).resolve().parents[1]
LaunchHttp = Callable[..., str]


def _drain(stream: IO[str]) -> None:
    for _ in stream:
        pass


@pytest.fixture(scope="module")
def launch_http() -> Iterator[LaunchHttp]:
    """Start `codex-mcp-http --port 0 ARGS...` as a subprocess; returns its /mcp URL.
    Every server started is stopped at the end of the module."""
    processes: list[subprocess.Popen[str]] = []

    def launch(*args: str) -> str:
        process = subprocess.Popen(
            [sys.executable, str(ROOT / "cmd/http"), "--port", "0", *args],
            stderr=subprocess.PIPE,
            stdout=subprocess.DEVNULL,
            text=True,
        )
        processes.append(process)
        assert process.stderr is not None
        for _ in range(50):
            found = re.search(r"listening on (http://\S+)", process.stderr.readline())
            if found:
                # Keep reading its log, or a chatty server would block on a full pipe.
                threading.Thread(target=_drain, args=(process.stderr,), daemon=True).start()
                return found.group(1)
        raise AssertionError("the HTTP server did not start")

    yield launch
    for process in processes:
        process.terminate()
        try:
            process.wait(15)
        except subprocess.TimeoutExpired:
            process.kill()
