"""Fixtures shared across the suite."""

from __future__ import annotations

import atexit
import os
import shutil
import subprocess
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from support.processes import HttpProcess

ROOT = Path(__file__).resolve().parents[1]

# The gateway keeps its children's listings under the user's cache directory: never the
# real one in tests (a listing cached by one run would change what the next one sees).
os.environ["XDG_CACHE_HOME"] = tempfile.mkdtemp(prefix="codex-mcp-test-cache-")
atexit.register(shutil.rmtree, os.environ["XDG_CACHE_HOME"], True)
# Nor its state directory: every gateway pins what it serves in a trust lock there.
os.environ["XDG_STATE_HOME"] = tempfile.mkdtemp(prefix="codex-mcp-test-state-")
atexit.register(shutil.rmtree, os.environ["XDG_STATE_HOME"], True)


@pytest.fixture(autouse=True)
def _own_cache_directory(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each test starts with an empty cache directory and an empty state directory (its
    gateways inherit them)."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path_factory.mktemp("xdg-cache")))
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path_factory.mktemp("xdg-state")))


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


@pytest.fixture(scope="module")
def launch_http() -> Iterator[LaunchHttp]:
    """Start `codex-mcp-http --port 0 ARGS...` as a subprocess; returns its /mcp URL.
    Every server started is stopped at the end of the module."""
    servers: list[HttpProcess] = []

    def launch(*args: str) -> LaunchedHttp:
        server = HttpProcess(*args)
        servers.append(server)
        url = LaunchedHttp(server.url)
        url.process, url.log = server.process, server.lines
        return url

    yield launch
    for server in servers:
        server.stop()
