"""`Server(lifespan=...)` over real transports: entered once when the server starts
(stdio, HTTP, each worker of --workers), its state reached from tools through
`ctx.lifespan_context` (here one aiohttp session every call and every session shares),
exited at shutdown (stdin's EOF, SIGTERM), and a failure to enter it a one-line start-up
error."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from aiohttp import web
from codex_mcp.client import Client
from support.polling import until
from support.processes import HttpProcess

ROOT = Path(__file__).resolve().parents[2]
SERVER = str(Path(__file__).resolve().parent / "servers/lifespan_server.py")


@pytest.fixture
async def backend() -> AsyncIterator[str]:
    """A real HTTP API on 127.0.0.1 for the tools to call."""

    async def hello(request: web.Request) -> web.Response:
        return web.Response(text=f"hello {request.match_info['name']}")

    app = web.Application()
    app.router.add_get("/hello/{name}", hello)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
    yield f"http://127.0.0.1:{port}"
    await runner.cleanup()


def _marks(path: Path) -> list[str]:
    return path.read_text().splitlines() if path.exists() else []


async def _until(condition: str, path: Path, count: int = 1, timeout: float = 20) -> list[str]:
    """The marks once `count` of them start with `condition`."""

    def enough() -> list[str] | None:
        marks = _marks(path)
        return marks if sum(m.startswith(condition) for m in marks) >= count else None

    found: list[str] = await until(enough, timeout, f"{count} {condition!r} marks in {path}")
    return found


async def test_stdio_enters_once_shares_the_state_and_exits_at_eof(
    backend: str, tmp_path: Path
) -> None:
    marks = tmp_path / "marks"
    env = {"LIFESPAN_MARKS": str(marks), "LIFESPAN_BACKEND": backend}
    command = [sys.executable, str(ROOT / "cmd/mcp"), "--serve", SERVER]
    async with Client.stdio(command, env=env) as client:
        first = (await client.call_tool("fetch", {"path": "/hello/one"})).text
        second = (await client.call_tool("fetch", {"path": "/hello/two"})).text
        assert [m.split()[0] for m in _marks(marks)] == ["enter"]  # once, before any call
    assert first.startswith("hello one via client ")
    assert second.startswith("hello two via client ")
    assert first.split(" via ")[1] == second.split(" via ")[1]  # the one shared client
    # Closing stdin ended the server: the lifespan exited, its client closed.
    pid = _marks(marks)[0].split()[-1]
    assert await _until("exit", marks) == [f"enter {pid}", f"exit closed=True {pid}"]


async def test_http_sessions_share_the_state_and_sigterm_exits_it(
    backend: str, tmp_path: Path
) -> None:
    marks = tmp_path / "marks"
    env = {**os.environ, "LIFESPAN_MARKS": str(marks), "LIFESPAN_BACKEND": backend}
    server = HttpProcess("--serve", SERVER, env=env)
    process, url = server.process, server.url
    try:
        answers = []
        for name in ("a", "b", "c"):  # three sessions, one after the other
            async with Client.http(url) as client:
                answers.append((await client.call_tool("fetch", {"path": f"/hello/{name}"})).text)
        assert [a.split(" via ")[0] for a in answers] == ["hello a", "hello b", "hello c"]
        assert len({a.split(" via ")[1] for a in answers}) == 1  # one client for all
        assert [m.split()[0] for m in _marks(marks)] == ["enter"]
    finally:
        process.send_signal(signal.SIGTERM)
        assert process.wait(20) == 0
    assert _marks(marks) == [f"enter {process.pid}", f"exit closed=True {process.pid}"]


@pytest.mark.parametrize(("script", "prog"), [("mcp", "codex-mcp"), ("http", "codex-mcp-http")])
def test_a_lifespan_that_fails_to_start_is_one_line(script: str, prog: str, tmp_path: Path) -> None:
    port = ["--port", "0"] if script == "http" else []
    done = subprocess.run(
        [sys.executable, str(ROOT / "cmd" / script), "--serve", SERVER, *port],
        capture_output=True,
        text=True,
        timeout=60,
        stdin=subprocess.DEVNULL,
        env={**os.environ, "LIFESPAN_MARKS": str(tmp_path / "marks"), "LIFESPAN_FAIL": "1"},
    )
    assert done.returncode == 1
    assert done.stderr.strip().splitlines() == [
        f"{prog}: server 'lifespan-demo': its lifespan failed to start: ConnectionRefusedError: "
        "the backend at http://127.0.0.1:1 refused the connection"
    ]
    assert not (tmp_path / "marks").exists()
