"""Fixtures for the client tests: real peers (the official SDK, server-everything) started
as subprocesses on 127.0.0.1 and free ports, shared by the whole session."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from client_helpers import (
    EVERYTHING_MISSING,
    everything_args,
    free_port,
    sdk_command,
    start_server,
    stop_server,
)


@pytest.fixture
def events_file(tmp_path: Path) -> Path:
    path = tmp_path / "events.txt"
    path.touch()
    return path


@pytest.fixture(scope="session")
def sdk_events(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("sdk") / "events.txt"
    path.touch()
    return path


@pytest.fixture(scope="session")
def sdk_http_url(sdk_events: Path) -> Iterator[str]:
    port = free_port()
    proc = start_server(
        sdk_command("streamable-http", str(port)),
        port,
        {"EVENTS_FILE": str(sdk_events)},
    )
    yield f"http://127.0.0.1:{port}/mcp"
    stop_server(proc)


@pytest.fixture(scope="session")
def sdk_sse_url() -> Iterator[str]:
    port = free_port()
    proc = start_server(sdk_command("sse", str(port)), port)
    yield f"http://127.0.0.1:{port}/sse"
    stop_server(proc)


@pytest.fixture(scope="session")
def everything_http_url() -> Iterator[str]:
    if EVERYTHING_MISSING:
        pytest.skip(EVERYTHING_MISSING)
    port = free_port()
    proc = start_server(everything_args("streamableHttp"), port, {"PORT": str(port)})
    yield f"http://127.0.0.1:{port}/mcp"
    stop_server(proc)
