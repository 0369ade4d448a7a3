"""Fixtures for replicas sharing sessions through Redis: a real `redis-server` on a free
loopback port (and valkey-server, and a Redis Cluster: topologies.py), replicas as real
`codex-mcp-http` subprocesses, and a real nginx in front of them. Tests skip when a server
or nginx is not installed (scripts/setup.sh installs them when run as root). The helpers are
in scale_setup.py."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from nginx_proxy import NginxProxies
from scale_setup import SHARED, HttpProcess, RedisServer, Replicas, Trio, wait_ready
from topologies import EVERY, ONE_SERVER, backend, backend_params


@pytest.fixture(params=backend_params(*EVERY))
def redis_server(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[RedisServer]:
    """Each Redis-backed test runs on one Redis, one Valkey and a three-node Cluster
    (where installed); a module that needs one server's URL overrides this (ONE_SERVER)."""
    with backend(request.param, tmp_path) as server:
        yield server  # type: ignore[misc]


@pytest.fixture
def replicas(redis_server: RedisServer) -> Iterator[Replicas]:
    """`replicas(n, *args)`: n `codex-mcp-http --serve servers/shared.py --redis-url ...`
    processes on free ports; all stopped after the test."""
    started: list[HttpProcess] = []

    def start(count: int, *args: str) -> list[HttpProcess]:
        group = [
            HttpProcess("--serve", SHARED, "--redis-url", redis_server.url, *args)
            for _ in range(count)
        ]
        started.extend(group)
        token = args[args.index("--bearer-token") + 1] if "--bearer-token" in args else None
        for server in group:  # listening at once; serving once Redis answers
            wait_ready(server, token)
        return group

    yield start
    for server in started:
        if server.process.poll() is None:
            server.stop()


def _trio(name: str, root: Path) -> Iterator[Trio]:
    with backend(name, root) as server:
        args = ("--serve", SHARED, "--redis-url", server.url)
        with ThreadPoolExecutor(3) as starting:  # the 2 cores start two at once
            started = list(starting.map(lambda _: HttpProcess(*args), range(3)))
        try:
            for replica in started:
                wait_ready(replica)
            yield Trio(server, started)  # type: ignore[arg-type]
        finally:
            for replica in started:
                replica.stop()


@pytest.fixture(scope="session", params=backend_params(*EVERY))
def trio(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Trio]:
    """Three plain replicas (no option) started once per backend for the whole run, for the
    tests that do nothing to a replica but serve sessions of their own: a replica's start is
    most of such a test's time (0.5 s, and 2 s and more on a loaded machine). A test that
    stops, kills or configures replicas, or counts what Redis is asked, starts its own."""
    yield from _trio(request.param, tmp_path_factory.mktemp("trio"))


@pytest.fixture(scope="session", params=backend_params(*ONE_SERVER))
def trio_on_one_server(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Trio]:
    """`trio` on one Redis or Valkey (for tests that read its keys with a plain client)."""
    yield from _trio(request.param, tmp_path_factory.mktemp("trio"))


@pytest.fixture
def nginx(tmp_path: Path) -> Iterator[Callable[..., str]]:
    """`nginx(body)`: nginx on a free port serving the http {} `body` (in which {port} is
    its port); returns the proxied /mcp URL. `round_robin(replicas)` builds one."""
    with NginxProxies(tmp_path) as proxies:
        yield lambda body: proxies.start(body, connections=4096)
