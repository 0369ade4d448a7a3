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

import aiohttp
from http_helpers import call, open_session, text_of
from http_process import ROOT, HttpProcess
from scale_setup import SERVING, SHARED, RedisServer


def _children(pid: int) -> set[int]:
    found: set[int] = set()
    for task in Path(f"/proc/{pid}/task").iterdir():
        text = (task / "children").read_text().split()
        found.update(int(child) for child in text)
    return found


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


async def test_workers_of_a_killed_supervisor_stop_serving(redis_server: RedisServer) -> None:
    server = HttpProcess("--workers", "2", "--serve", SHARED, "--redis-url", redis_server.url)
    workers: set[int] = set()
    try:
        deadline = time.monotonic() + 20
        while server.stderr.count(SERVING) < 2:
            assert time.monotonic() < deadline, server.stderr
            await asyncio.sleep(0.05)
        workers = _children(server.pid)
        assert len(workers) == 2
        server.process.kill()  # SIGKILL: the supervisor cannot pass anything on
        server.process.wait(10)
        deadline = time.monotonic() + 30
        while any(_running(pid) for pid in workers):
            assert time.monotonic() < deadline, "workers kept serving without a supervisor"
            await asyncio.sleep(0.05)
        server.wait_for_line("supervisor is gone", 10)
    finally:
        server.stop()
        for pid in workers:
            if _running(pid):
                os.kill(pid, signal.SIGKILL)
