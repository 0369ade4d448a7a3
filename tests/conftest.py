"""Fixtures shared across the suite."""

from __future__ import annotations

import atexit
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import IO, Any

import pytest

ROOT = Path(__file__).resolve().parents[1]

# The gateway keeps its children's listings under the user's cache directory: never the
# real one in tests (a listing cached by one run would change what the next one sees).
os.environ["XDG_CACHE_HOME"] = tempfile.mkdtemp(prefix="codex-mcp-test-cache-")
atexit.register(shutil.rmtree, os.environ["XDG_CACHE_HOME"], True)


@pytest.fixture(autouse=True)
def _own_cache_directory(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each test starts with an empty cache directory (its gateways inherit it)."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path_factory.mktemp("xdg-cache")))


@pytest.fixture
def exported() -> Iterator[Any]:
    """The spans our tracing exports while the test runs (an OpenTelemetry SDK in-memory
    exporter), for the tests that skip without the SDK."""
    from codex_mcp.observe import tracing
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    tracing.use_provider(provider)
    yield exporter
    tracing.use_provider(None)


class LaunchedHttp(str):
    """The /mcp URL of a launched server (a plain str to its users), with the process
    and every line it has logged so far."""

    process: subprocess.Popen[str]
    log: list[str]

    @property
    def pid(self) -> int:
        return self.process.pid


LaunchHttp = Callable[..., LaunchedHttp]


def _drain(stream: IO[str], lines: list[str]) -> None:
    lines.extend(stream)


@pytest.fixture(scope="module")
def launch_http() -> Iterator[LaunchHttp]:
    """Start `codex-mcp-http --port 0 ARGS...` as a subprocess; returns its /mcp URL.
    Every server started is stopped at the end of the module."""
    processes: list[subprocess.Popen[str]] = []

    def launch(*args: str) -> LaunchedHttp:
        process = subprocess.Popen(
            [sys.executable, str(ROOT / "cmd/http"), "--port", "0", *args],
            stderr=subprocess.PIPE,
            stdout=subprocess.DEVNULL,
            text=True,
        )
        processes.append(process)
        assert process.stderr is not None
        lines: list[str] = []
        for _ in range(50):
            lines.append(process.stderr.readline())
            found = re.search(r"listening on (http://\S+)", lines[-1])
            if found:
                # Keep reading its log, or a chatty server would block on a full pipe.
                threading.Thread(target=_drain, args=(process.stderr, lines), daemon=True).start()
                url = LaunchedHttp(found.group(1))
                url.process, url.log = process, lines
                return url
        raise AssertionError("the HTTP server did not start:\n" + "".join(lines))

    yield launch
    for process in processes:
        process.terminate()
        try:
            process.wait(15)
        except subprocess.TimeoutExpired:
            process.kill()
