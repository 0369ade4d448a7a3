"""A mistyped --redis-url: what retrying can fix (nothing listens on the port yet, a
database Redis does not have) leaves the server listening, alive and not ready, saying
why; what it cannot fix (not a Redis URL, refused credentials) ends the server at once
with one line and a non-zero status."""

from __future__ import annotations

import asyncio
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import aiohttp
import pytest
from http_process import ROOT, HttpProcess
from scale_setup import REDIS, SHARED, RedisServer, free_port
from topologies import ONE_SERVER, backend, backend_params


@pytest.fixture(params=backend_params(*ONE_SERVER))
def redis_server(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[RedisServer]:
    """One server's URL (its keys are read here): Redis and Valkey, not the Cluster."""
    with backend(request.param, tmp_path) as server:
        yield server  # type: ignore[misc]


def run_to_exit(url: str, *more: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [
            sys.executable,
            str(ROOT / "cmd/http"),
            "--port",
            "0",
            "--serve",
            SHARED,
            "--redis-url",
            url,
            *more,
        ],
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def one_line(done: subprocess.CompletedProcess[str]) -> str:
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert "Traceback" not in done.stderr, done.stderr
    assert done.returncode != 0
    return lines[-1]


@pytest.mark.parametrize(
    "url",
    [
        "http://127.0.0.1:6379/0",
        "redis+sentinel://:secret@127.0.0.1:26379,/svc",  # an empty host
    ],
)
def test_not_a_redis_url_exits_with_one_line(url: str) -> None:
    """The start-up line (each case of what is refused: test_hostile_redis_url.py)."""
    done = run_to_exit(url)
    assert one_line(done).startswith("codex-mcp-http: --redis-url is not a Redis URL")
    assert len(done.stderr.strip().splitlines()) == 1, done.stderr
    assert "secret" not in done.stderr


def test_an_unknown_wait_exits_with_one_line() -> None:
    done = run_to_exit("redis://127.0.0.1:1/0", "--redis-wait", "sessions,everything")
    assert one_line(done) == (
        "codex-mcp-http: --redis-wait: unknown everything; "
        "give any of sessions, tasks, events, or none"
    )
    assert done.returncode == 78


@pytest.mark.parametrize(
    "url",
    ["redis+sentinel://127.0.0.1:{port}/codex/0", "redis+cluster://127.0.0.1:{port}"],
    ids=["sentinel", "cluster"],
)
async def test_sentinels_or_nodes_not_there_yet_leave_it_unready_saying_why(url: str) -> None:
    """Nothing listens where the URL points: alive, not ready, the reason said (retrying
    can fix it: the sentinels or the nodes may be starting)."""
    url = url.format(port=free_port())
    server = HttpProcess("--serve", SHARED, "--redis-url", url)
    try:
        async with aiohttp.ClientSession() as http:
            async with http.get(f"{server.base}/healthz") as response:
                assert response.status == 200
            status, body = await readiness(http, server.base)
            assert status == 503 and body["status"] == "session store unreachable", body
            assert server.process.poll() is None
    finally:
        server.stop()


@pytest.mark.slow  # a supervisor and its workers: 2-4 s of Python starting on a loaded machine
def test_workers_with_a_bad_url_stop_instead_of_restarting_for_ever() -> None:
    done = run_to_exit("http://127.0.0.1:6379/0", "--workers", "2")
    assert done.returncode == 78, done.stderr  # EX_CONFIG: restarting cannot fix it
    assert "is not a Redis URL" in done.stderr and "Traceback" not in done.stderr


@pytest.mark.slow
def test_refused_credentials_exit_with_one_line_and_no_password() -> None:
    if REDIS is None:
        pytest.skip("redis-server not installed: apt-get install -y redis-server")
    server = RedisServer("--requirepass", "right-one")
    try:
        done = run_to_exit(f"redis://:wrong-one@127.0.0.1:{server.port}/0")
        line = one_line(done)
        assert "refused the credentials" in line, done.stderr
        assert "wrong-one" not in done.stderr  # never the password
        done = run_to_exit(f"redis://127.0.0.1:{server.port}/0")  # none given: also refused
        assert "refused the credentials" in one_line(done), done.stderr
    finally:
        server.stop()


async def readiness(http: aiohttp.ClientSession, base: str) -> tuple[int, dict[str, str]]:
    async with http.get(f"{base}/readyz") as response:
        return response.status, await response.json()


async def test_nothing_on_the_port_yet_listens_unready_then_serves_when_redis_starts() -> None:
    if REDIS is None:
        pytest.skip("redis-server not installed: apt-get install -y redis-server")
    port = free_port()
    server = HttpProcess("--serve", SHARED, "--redis-url", f"redis://127.0.0.1:{port}/0")
    redis: RedisServer | None = None
    try:
        async with aiohttp.ClientSession() as http:
            async with http.get(f"{server.base}/healthz") as response:
                assert response.status == 200  # alive at once
            status, body = await readiness(http, server.base)
            assert status == 503 and body["status"] == "session store unreachable"
            assert f"127.0.0.1:{port}" in body["reason"], body
            async with http.post(server.url, json={}) as response:
                assert response.status == 503
            redis = RedisServer(port=port)
            deadline = time.monotonic() + 20
            while (await readiness(http, server.base))[0] != 200:  # it kept trying
                assert time.monotonic() < deadline, server.stderr
                await asyncio.sleep(0.1)
    finally:
        server.stop()
        if redis is not None:
            redis.stop()
    said = server.stderr.count(f"Redis at redis://127.0.0.1:{port}/0 is unreachable")
    assert said == 1, server.stderr  # said once, not on every try


async def test_a_database_redis_does_not_have_leaves_it_unready_saying_why(
    redis_server: RedisServer,
) -> None:
    url = redis_server.url.rsplit("/", 1)[0] + "/99"
    server = HttpProcess("--serve", SHARED, "--redis-url", url)
    try:
        async with aiohttp.ClientSession() as http:
            async with http.get(f"{server.base}/healthz") as response:
                assert response.status == 200
            deadline = time.monotonic() + 10
            while "DB index" not in (await readiness(http, server.base))[1].get("reason", ""):
                assert time.monotonic() < deadline, server.stderr
                await asyncio.sleep(0.1)
            assert (await readiness(http, server.base))[0] == 503
    finally:
        server.stop()
