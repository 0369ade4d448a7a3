"""`codex-mcp-http --workers N`: N processes on one port sharing sessions through Redis,
under a parent that stops them all on SIGTERM; more than one without Redis is refused."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from http_helpers import JSON, call, init, open_session, text_of
from http_process import ROOT, HttpProcess
from scale_setup import SERVING, SHARED, RedisServer
from support.polling import until


def _children(pid: int) -> set[int]:
    found: set[int] = set()
    for task in Path(f"/proc/{pid}/task").iterdir():
        text = (task / "children").read_text().split()
        found.update(int(child) for child in text)
    return found


@pytest.mark.slow
async def test_two_workers_share_the_port_and_the_sessions(redis_server: RedisServer) -> None:
    server = HttpProcess("--workers", "2", "--serve", SHARED, "--redis-url", redis_server.url)
    try:
        for _ in range(200):  # both workers listening (the first said so already)
            if server.stderr.count(SERVING) >= 2:
                break
            await asyncio.sleep(0.05)
        workers = _children(server.pid)
        assert len(workers) == 2
        served: set[str] = set()
        # A new connection per request: the kernel spreads connections over the workers.
        connector = aiohttp.TCPConnector(force_close=True)
        async with aiohttp.ClientSession(connector=connector) as http:
            session = await open_session(http, server.url)
            for index in range(40):
                async with http.post(
                    server.url, json=call(index, "whoami", {}), headers=session
                ) as r:
                    assert r.status == 200, await r.text()
                    served.add(text_of(await r.json()))
                if len(served) == 2:
                    break
        assert served == {str(pid) for pid in workers}
    finally:
        assert server.stop() == 0
    assert not any(_running(pid) for pid in workers)


def _running(pid: int) -> bool:
    try:
        return " Z " not in Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return False


def test_more_than_one_worker_without_redis_is_refused() -> None:
    done = subprocess.run(
        [sys.executable, str(ROOT / "cmd/http"), "--workers", "2", "--port", "0"],
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert done.returncode == 1
    assert "--workers 2 needs --redis-url" in done.stderr


@pytest.mark.slow
async def test_workers_of_a_killed_supervisor_stop_serving(redis_server: RedisServer) -> None:
    server = HttpProcess("--workers", "2", "--serve", SHARED, "--redis-url", redis_server.url)
    workers: set[int] = set()
    try:
        await until(lambda: server.stderr.count(SERVING) >= 2, 20, lambda: server.stderr)
        workers = _children(server.pid)
        assert len(workers) == 2
        server.process.kill()  # SIGKILL: the supervisor cannot pass anything on
        server.process.wait(10)
        await until(
            lambda: not any(_running(pid) for pid in workers),
            30,
            "workers kept serving without a supervisor",
        )
        server.wait_for_line("supervisor is gone", 10)
    finally:
        server.stop()
        for pid in workers:
            if _running(pid):
                os.kill(pid, signal.SIGKILL)


FLAKY = str(Path(__file__).parent / "servers/flaky_worker.py")


async def _readyz(http: aiohttp.ClientSession, base: str) -> tuple[int, Any]:
    try:
        async with http.get(f"{base}/readyz") as response:
            return response.status, await response.json()
    except aiohttp.ClientError:
        return 0, None  # between a worker's death and the next listener


@pytest.mark.slow
async def test_a_crash_looping_worker_never_stops_the_healthy_one(
    redis_server: RedisServer, tmp_path: Path
) -> None:
    marker = tmp_path / "crash"
    env = {**os.environ, "FLAKY_MARKER": str(marker)}
    server = HttpProcess(
        "--workers", "2", "--serve", FLAKY, "--redis-url", redis_server.url, env=env
    )
    try:
        await until(lambda: server.stderr.count(SERVING) >= 2)
        marker.write_text("1")
        os.kill(_worker(server.pid, "1"), signal.SIGKILL)  # and it dies on every restart
        await until(lambda: server.stderr.count("worker 1 exited") >= 6, 60)
        assert server.process.poll() is None, server.stderr
        assert "restarting it in" in server.stderr
        healthy = _worker(server.pid, "0")
        connector = aiohttp.TCPConnector(force_close=True)
        async with aiohttp.ClientSession(connector=connector) as http:
            session = await open_session(http, server.url)
            async with http.post(server.url, json=call(1, "whoami", {}), headers=session) as r:
                assert text_of(await r.json()) == str(healthy)
            status, ready = await _readyz(http, server.base)
            assert status == 200 and ready["status"] == "degraded", ready
            assert ready["workers"]["serving"] <= 1 and ready["workers"]["of"] == 2
            assert "worker 1 exited with 3" in ready["reason"]
    finally:
        assert server.stop() == 0


@pytest.mark.slow
async def test_with_no_worker_serving_the_port_answers_503_with_the_reason(
    redis_server: RedisServer, tmp_path: Path
) -> None:
    marker = tmp_path / "crash"
    env = {**os.environ, "FLAKY_MARKER": str(marker)}
    server = HttpProcess(
        "--workers", "2", "--serve", FLAKY, "--redis-url", redis_server.url, env=env
    )
    try:
        await until(lambda: server.stderr.count(SERVING) >= 2)
        marker.write_text("0 1")
        for index in ("0", "1"):
            os.kill(_worker(server.pid, index), signal.SIGKILL)
        async with aiohttp.ClientSession() as http:
            deadline = time.monotonic() + 30
            while True:
                status, body = await _readyz(http, server.base)
                if status == 503:
                    break
                assert time.monotonic() < deadline, (status, body, server.stderr)
                await asyncio.sleep(0.05)
            assert body["status"] == "no worker serving"
            assert "exited with" in body["reason"] and "restarting it in" in body["reason"]
            marker.unlink()  # the next restarts succeed: the port is the workers' again
            deadline = time.monotonic() + 60
            while (await _readyz(http, server.base))[0] != 200:
                assert time.monotonic() < deadline, server.stderr
                await asyncio.sleep(0.1)
    finally:
        assert server.stop() == 0


@pytest.mark.slow
async def test_a_restarting_worker_takes_no_connection_before_redis_answers_it(
    redis_server: RedisServer,
) -> None:
    """A worker that starts again listens only once its Redis connection is up: until then
    its sibling serves every new connection, and no client gets 503 for a worker that is
    merely connecting (a new connection per initialize, all through the restart)."""
    server = HttpProcess("--workers", "2", "--serve", SHARED, "--redis-url", redis_server.url)
    try:
        await until(lambda: server.stderr.count(SERVING) >= 2)
        os.kill(_worker(server.pid, "1"), signal.SIGKILL)
        answers: list[int] = []
        connector = aiohttp.TCPConnector(force_close=True)
        async with aiohttp.ClientSession(connector=connector) as http:
            deadline = time.monotonic() + 60
            # Until the restarted worker has served some of these initializes itself.
            while server.stderr.count(SERVING) < 3 or answers[-40:].count(200) < 40:
                assert time.monotonic() < deadline, server.stderr
                try:
                    async with http.post(server.url, json=init(), headers=JSON) as response:
                        answers.append(response.status)
                except aiohttp.ClientConnectionError:
                    pass  # the killed worker's queued connections are reset
        assert 503 not in answers, answers
        assert answers.count(200) >= 40
    finally:
        assert server.stop() == 0


def _worker(supervisor: int, index: str, missing_ok: bool = False) -> int:
    """The pid of the supervisor's live worker number `index` (0 if `missing_ok` and none)."""
    for pid in _children(supervisor):
        try:
            environ = Path(f"/proc/{pid}/environ").read_bytes().split(b"\0")
        except OSError:
            continue
        if f"CODEX_MCP_WORKER_INDEX={index}".encode() in environ and _running(pid):
            return pid
    if missing_ok:
        return 0
    raise AssertionError(f"no live worker {index}")


LIFESPAN = str(ROOT / "tests/server/servers/lifespan_server.py")


@pytest.mark.slow
async def test_each_worker_enters_the_lifespan_once_and_exits_it_on_sigterm(
    redis_server: RedisServer, tmp_path: Path
) -> None:
    marks = tmp_path / "marks"
    env = {**os.environ, "LIFESPAN_MARKS": str(marks)}
    server = HttpProcess(
        "--workers", "2", "--serve", LIFESPAN, "--redis-url", redis_server.url, env=env
    )
    try:
        await until(lambda: server.stderr.count(SERVING) >= 2)
        workers = _children(server.pid)
        entered = sorted(marks.read_text().splitlines())
        assert entered == sorted(f"enter {pid}" for pid in workers)
    finally:
        assert server.stop() == 0
    left = [line for line in marks.read_text().splitlines() if line.startswith("exit")]
    assert sorted(left) == sorted(f"exit closed=True {pid}" for pid in workers)


def _python_without_redis(root: Path) -> str:
    """A real virtualenv holding every package of ours but the Redis client: each entry of
    this venv's site-packages linked in, except redis (and its C parser)."""
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(root)], check=True)
    ours = Path(next(p for p in sys.path if p.endswith("site-packages")))
    [theirs] = (root / "lib").glob("python3*/site-packages")
    for entry in ours.iterdir():
        if not entry.name.startswith(("redis", "hiredis")):
            (theirs / entry.name).symlink_to(entry)
    python = str(root / "bin/python")
    found = subprocess.run([python, "-c", "import redis"], capture_output=True, timeout=30)
    assert found.returncode != 0  # really missing
    return python


@pytest.mark.slow
def test_workers_without_the_redis_client_stop_with_one_line(tmp_path: Path) -> None:
    """Issue 39: `--workers 2 --redis-url` without the extra restarted its workers for ever,
    saying "1 of 2 workers serving" while none was. It stops at once, as one process does."""
    python = _python_without_redis(tmp_path / "venv")
    command = [python, str(ROOT / "cmd/http"), "--workers", "2", "--port", "0"]
    done = subprocess.run(
        [*command, "--redis-url", "redis://127.0.0.1:1/0"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode != 0
    lines = done.stderr.strip().splitlines()
    assert lines == ["codex-mcp-http: --redis-url needs the Redis client: "
                     "pip install 'codex-mcp[redis]'"], done.stderr  # fmt: skip
    single = subprocess.run(
        [python, str(ROOT / "cmd/http"), "--port", "0", "--redis-url", "redis://127.0.0.1:1/0"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert (single.returncode, single.stderr.strip().splitlines()) == (done.returncode, lines)


@pytest.mark.slow
async def test_a_worker_that_never_listens_is_not_said_to_serve(
    redis_server: RedisServer, tmp_path: Path
) -> None:
    """Worker 1 hangs before it listens while worker 0 dies on every start: the supervisor
    counts only workers that listen, so it says none serves (it said "1 of 2")."""
    marker, hang = tmp_path / "crash", tmp_path / "hang"
    env = {**os.environ, "FLAKY_MARKER": str(marker), "FLAKY_HANG": str(hang)}
    server = HttpProcess(
        "--workers", "2", "--serve", FLAKY, "--redis-url", redis_server.url, env=env
    )
    try:
        await until(lambda: server.stderr.count(SERVING) >= 2)
        marker.write_text("0")
        hang.write_text("1")
        os.kill(_worker(server.pid, "1"), signal.SIGKILL)  # it comes back, and hangs
        await until(lambda: "worker 1 exited" in server.stderr)
        await until(lambda: _worker(server.pid, "1", missing_ok=True))
        os.kill(_worker(server.pid, "0"), signal.SIGKILL)  # and dies on every restart
        await until(lambda: server.stderr.count("worker 0 exited") >= 2, 30)
        said = [line for line in server.lines if "worker 0 exited" in line]
        assert all(line.rstrip().endswith("0 of 2 workers serving") for line in said), said
    finally:
        hang.unlink(missing_ok=True)
        assert server.stop() == 0
