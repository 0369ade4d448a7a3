"""The load generator against the two floors, as real processes on real transports."""

from __future__ import annotations

import asyncio
import math
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import aiohttp
import aiohttp.web
import pytest
from codex_mcp.bench import http_load, session_per_call, stdio_load
from codex_mcp.bench.cli import main as bench_main

ROOT = Path(__file__).resolve().parents[1]
ECHO = {"name": "echo", "arguments": {"message": "hi"}}


def _sane(value: float) -> bool:
    return math.isfinite(value) and value > 0


async def test_stdio_figures_against_the_floor() -> None:
    figures = await stdio_load.measure(
        [sys.executable, str(ROOT / "bench/floors/stdio_floor.py")],
        params=ECHO,
        sequential=50,
        calls=300,
        in_flight=8,
    )
    assert figures["sequential_calls"] == 50
    assert figures["pipelined_calls"] == 300
    for key in ("cold_start_ms", "p50_ms", "p99_ms", "throughput_per_s", "rss_mb"):
        assert _sane(figures[key]), key
    assert figures["p99_ms"] >= figures["p50_ms"]


async def test_http_figures_against_the_floor() -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    server = subprocess.Popen([sys.executable, str(ROOT / "bench/floors/http_floor.py"), str(port)])
    try:
        url = f"http://127.0.0.1:{port}/mcp"
        deadline = time.monotonic() + 15
        while True:
            try:
                with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                    break
            except OSError:
                assert time.monotonic() < deadline, "the floor did not start"
                await asyncio.sleep(0.05)
        figures = await http_load.measure(
            url, params=ECHO, sequential=20, calls=200, concurrency=4, pid=server.pid
        )
        assert figures["sequential_calls"] == 20
        assert figures["concurrent_calls"] == 200
        assert _sane(figures["throughput_per_s"])
        assert _sane(figures["rss_mb"])
    finally:
        server.terminate()
        server.wait(10)


async def test_each_session_on_its_own_connection_stays_on_one_worker() -> None:
    """The floor of `--workers 2` on Redis: the supervisor and two workers keeping sessions
    in memory (bench/floors/workers_in_memory.py). Each worker knows only the sessions made
    on it, so every call is answered only if each session stays on its worker: the load
    gives each session a connection of its own (sharing one pool, a session's request
    sometimes takes another's connection, reaches the other worker and gets 404)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    floor = [sys.executable, str(ROOT / "bench/floors/workers_in_memory.py"), "2", str(port)]
    server = subprocess.Popen(floor)
    try:
        url = f"http://127.0.0.1:{port}/mcp"
        deadline = time.monotonic() + 30
        while True:
            try:
                with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                    break
            except OSError:
                assert time.monotonic() < deadline, "the floor did not start"
                await asyncio.sleep(0.05)
        figures = await http_load.measure(
            url,
            params=ECHO,
            sequential=20,
            calls=400,
            concurrency=8,
            pid=server.pid,
            connection_per_session=True,
        )
        assert figures["concurrent_calls"] == 400
        assert _sane(figures["cpu_us_per_call"])  # the workers' CPU is counted with the parent's
    finally:
        server.terminate()
        server.wait(15)


async def test_each_session_calls_once_before_the_clock(monkeypatch: pytest.MonkeyPatch) -> None:
    """The throughput phase's CPU is sampled only after every client session has made one
    call: a server of several processes does each one's first-call work (a first
    tools/call's imports) before the clock, as one process does in the sequential phase.
    A stand-in MCP server counts each session's calls; the sampling notes them."""
    calls: dict[str, int] = {}
    seen_at_sampling: list[dict[str, int]] = []

    async def mcp(request: aiohttp.web.Request) -> aiohttp.web.Response:
        message = await request.json()
        if message.get("method") == "initialize":
            session = f"s{len(calls)}"
            calls[session] = 0
            result = {"protocolVersion": "2025-06-18", "capabilities": {}, "serverInfo": {}}
            body = {"jsonrpc": "2.0", "id": message["id"], "result": result}
            return aiohttp.web.json_response(body, headers={"Mcp-Session-Id": session})
        if "id" not in message:
            return aiohttp.web.Response(status=202)
        calls[request.headers["Mcp-Session-Id"]] += 1
        result = {"content": [{"type": "text", "text": "hi"}]}
        return aiohttp.web.json_response({"jsonrpc": "2.0", "id": message["id"], "result": result})

    def sample(pid: int) -> Any:
        seen_at_sampling.append(dict(calls))
        return None

    monkeypatch.setattr(http_load, "sample_process", sample)
    app = aiohttp.web.Application()
    app.router.add_post("/mcp", mcp)
    runner = aiohttp.web.AppRunner(app)
    await runner.setup()
    site = aiohttp.web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    try:
        port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
        await http_load.measure(
            f"http://127.0.0.1:{port}/mcp",
            params=ECHO,
            sequential=5,
            calls=40,
            concurrency=4,
            pid=1,
            connection_per_session=True,
        )
    finally:
        await runner.cleanup()
    before = seen_at_sampling[0]
    assert len(before) == 5  # the sequential phase's session and the 4 clients'
    assert sorted(before.values()) == [1, 1, 1, 1, 10]
    assert sum(calls.values()) == 10 + 4 + 40


def test_cli_prints_a_table(capsys: object) -> None:
    code = bench_main(
        [
            "stdio",
            "--sequential",
            "10",
            "--calls",
            "50",
            "--",
            sys.executable,
            str(ROOT / "bench/floors/stdio_floor.py"),
        ]
    )
    assert code == 0
    out = capsys.readouterr().out  # type: ignore[attr-defined]
    assert "throughput_per_s" in out and "stdio" in out


def test_cli_keeps_the_commands_own_separator(capsys: object) -> None:
    """Only the first `--` is the bench's: a gateway command (`codex-mcp -- <child>`) keeps
    its own, or the gateway would take its child's command for its own arguments."""
    server = [sys.executable, str(ROOT / "cmd/mcp")]
    code = bench_main(["stdio", "--sequential", "5", "--calls", "20", "--", *server, "--", *server])
    assert code == 0
    out = capsys.readouterr().out  # type: ignore[attr-defined]
    assert "throughput_per_s" in out


async def test_many_sessions_times_a_first_call_apart_from_the_phases(launch_http: Any) -> None:
    """The concurrent-sessions case: a server's first tools/call (its one-time work) on a
    session of its own, deleted, then every session opened and called once, each answer its
    own, with the server's CPU for the call phase."""
    url = launch_http()
    figures = await http_load.many_sessions(url, sessions=20, pid=url.pid, parallel=5)
    assert figures["correct_answers"] == 20
    assert _sane(figures["first_call_ms"])
    assert _sane(figures["open_per_s"]) and _sane(figures["calls_per_s"])
    assert figures["cpu_us_per_call"] >= 0
    readyz = url.replace("/mcp", "/readyz")
    async with aiohttp.ClientSession() as http, http.get(readyz) as response:
        assert (await response.json())["sessions"] == 20  # the first call's session is gone


async def test_session_per_call_opens_and_deletes_a_session_per_call(launch_http: Any) -> None:
    """The TM Dev Lab v2 shape against our server: every call a session of its own, each
    answer checked, and every session DELETEd (none left open on the server)."""
    url = launch_http()
    figures = await session_per_call.measure(
        url, users=4, seconds=1.0, warmup=0.2, pid=url.pid, calls=session_per_call.echo_calls
    )
    assert figures["errors"] == 0
    assert figures["sessions_per_s"] > 0 and _sane(figures["cpu_us_per_request"])
    assert figures["p99_ms"] >= figures["p50_ms"] > 0
    readyz = url.replace("/mcp", "/readyz")
    async with aiohttp.ClientSession() as http, http.get(readyz) as response:
        assert (await response.json())["sessions"] == 0


async def test_session_per_call_counts_a_wrong_answer_as_an_error(launch_http: Any) -> None:
    url = launch_http()

    def expecting_something_else(user: int) -> list[session_per_call.Call]:
        echo = {"name": "echo", "arguments": {"message": "sent"}}
        return [session_per_call.Call("tools/call", echo, lambda r: r["content"][0]["text"] == "x")]

    with pytest.raises(RuntimeError, match="sessions answered wrongly"):
        await session_per_call.measure(
            url, users=2, seconds=0.5, warmup=0.1, calls=expecting_something_else
        )
