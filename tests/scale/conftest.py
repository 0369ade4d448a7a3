"""Fixtures for replicas sharing sessions through Redis: a real `redis-server` on a free
loopback port (and valkey-server, and a Redis Cluster: topologies.py), replicas as real
`codex-mcp-http` subprocesses, and a real nginx in front of them. Tests skip when a server
or nginx is not installed (scripts/setup.sh installs them when run as root). The helpers are
in scale_setup.py."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from nginx_proxy import NginxProxies
from scale_setup import SHARED, HttpProcess, RedisServer, Replicas, wait_ready
from topologies import EVERY, backend, backend_params


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


@pytest.fixture
def nginx(tmp_path: Path) -> Iterator[Callable[..., str]]:
    """`nginx(body)`: nginx on a free port serving the http {} `body` (in which {port} is
    its port); returns the proxied /mcp URL. `round_robin(replicas)` builds one."""
    with NginxProxies(tmp_path) as proxies:
        yield lambda body: proxies.start(body, connections=4096)
