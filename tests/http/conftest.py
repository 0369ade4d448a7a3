"""Fixtures for the HTTP transport tests: the server in-process (aiohttp's test server on
127.0.0.1) and as a real `python cmd/http --port 0` subprocess."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest
from aiohttp.test_utils import TestClient
from codex_mcp.transports.http import HttpConfig, create_app
from http_process import HttpProcess, MakeClient
from oauth_helpers import AuthorizationServer


@pytest.fixture
def http_process() -> Iterator[Callable[..., HttpProcess]]:
    """Start `python cmd/http --port 0 ARGS...`; every server is stopped after the test."""
    started: list[HttpProcess] = []

    def start(*args: str, env: dict[str, str] | None = None) -> HttpProcess:
        server = HttpProcess(*args, env=env)
        started.append(server)
        return server

    yield start
    for server in started:
        server.stop()


@pytest.fixture
def make_client(aiohttp_client: Any) -> MakeClient:
    """`await make_client(**HttpConfig fields)`: the app on 127.0.0.1 in this event loop,
    serving the tools of `build_test_server()` unless `core=` is given. aiohttp's test
    server always cancels a handler whose client hangs up; `serve_http` must do the same,
    which the subprocess tests check."""
    from http_helpers import build_test_server

    async def make(core: Any = None, **config: Any) -> TestClient[Any, Any]:
        app = create_app(core or build_test_server().core, HttpConfig(**config))
        client: TestClient[Any, Any] = await aiohttp_client(app)
        return client

    return make


@pytest.fixture(scope="module")
def authorization_server() -> Iterator[AuthorizationServer]:
    """A real OAuth authorization server (oauth2-mock-server) for the module's tests."""
    server = AuthorizationServer()
    yield server
    server.stop()


@pytest.fixture(scope="module")
def resource_server(authorization_server: AuthorizationServer) -> Iterator[HttpProcess]:
    """A real `codex-mcp-http` accepting its tokens: every request needs `mcp`, the echo
    tool needs `echo.use` too."""
    server = HttpProcess(
        "--oauth-issuer", authorization_server.issuer,
        "--oauth-scope", "mcp",
        "--oauth-tool-scope", "echo=echo.use",
    )  # fmt: skip
    yield server
    server.stop()
