"""What a Codex session costs: `codex-mcp-http --serve codex` with a few sessions, offline.

For each session, one after another: open it (initialize), hold its GET stream (seed 004's
recipe), call `codex` and time the first `codex/event` (this starts the session's
app-server), then call again on the warm app-server. With every session open and idle, it
reads from /proc the RSS of each session's app-server (the npm `codex` Node wrapper and
the native app-server it runs, one process group) and the server's own growth per session.
Codex talks to the fake Responses model of the tests on 127.0.0.1: no key, no network.

    .venv/bin/python bench/codex_sessions.py [--sessions 3]

Bounded (at most 8 sessions) and quick (a few seconds a session): a measurement to run by
hand, not a test.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import aiohttp
from aiohttp import web

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from codex.processes import children, group, pss_kib, rss_kib, uss_kib  # noqa: E402
from interop.fake_responses_provider import FakeProvider, codex_config, echo_prompt  # noqa: E402

CODEX = Path(os.environ.get("CODEX_BIN") or ROOT / ".tools/npm/node_modules/.bin/codex")
JSON = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}


def message(request_id: int, method: str, params: dict[str, Any]) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}


class Session:
    def __init__(self, http: aiohttp.ClientSession, url: str) -> None:
        self.http = http
        self.url = url
        self.headers: dict[str, str] = {}
        self.stream: aiohttp.ClientResponse | None = None

    async def open(self) -> float:
        """initialize + initialized + the GET stream; seconds taken."""
        started = time.perf_counter()
        init = message(
            1,
            "initialize",
            {
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "bench", "version": "1"},
            },
        )
        async with self.http.post(self.url, json=init, headers=JSON) as response:
            session_id = response.headers["Mcp-Session-Id"]
        self.headers = {**JSON, "Mcp-Session-Id": session_id, "MCP-Protocol-Version": "2025-06-18"}
        initialized = {"jsonrpc": "2.0", "method": "notifications/initialized"}
        async with self.http.post(self.url, json=initialized, headers=self.headers):
            pass
        self.stream = await self.http.get(
            self.url, headers={**self.headers, "Accept": "text/event-stream"}
        )
        return time.perf_counter() - started

    async def call_codex(self, request_id: int, prompt: str) -> tuple[float, float]:
        """(seconds to the first codex/event, seconds to the result) of one `codex` call."""
        assert self.stream is not None
        started = time.perf_counter()
        call = message(request_id, "tools/call", {"name": "codex", "arguments": {"prompt": prompt}})
        post = asyncio.ensure_future(self.http.post(self.url, json=call, headers=self.headers))
        first_event = await self._first_event(request_id) - started
        async with await post as response:
            answer = await response.json()
        assert answer["result"]["structuredContent"]["content"] == f"You said: {prompt}", answer
        return first_event, time.perf_counter() - started

    async def _first_event(self, request_id: int) -> float:
        assert self.stream is not None
        while True:
            line = await asyncio.wait_for(self.stream.content.readline(), 120)
            if line.startswith(b"data:"):
                data = json.loads(line[5:])
                if data.get("method") == "codex/event":
                    assert data["params"]["_meta"]["requestId"] == request_id
                    arrived = time.perf_counter()
                    await self._drain_call(request_id)
                    return arrived

    async def _drain_call(self, request_id: int) -> None:
        """Read the call's events up to task_complete, so the next call starts clean."""
        assert self.stream is not None
        while True:
            line = await asyncio.wait_for(self.stream.content.readline(), 120)
            if line.startswith(b"data:"):
                msg = json.loads(line[5:])["params"]["msg"]
                if msg["type"] == "task_complete":
                    return

    async def close(self) -> None:
        if self.stream is not None:
            self.stream.close()
        async with self.http.delete(self.url, headers=self.headers):
            pass


def start_server(tmp: Path, model_port: int) -> tuple[subprocess.Popen[str], str]:
    home, work = tmp / "home", tmp / "work"
    home.mkdir()
    work.mkdir()
    (home / "config.toml").write_text(codex_config(model_port, retries=False))
    env = {
        **os.environ,
        "CODEX_HOME": str(home),
        "CODEX_BIN": str(CODEX),
        "FAKE_PROVIDER_KEY": "not-a-real-key",
    }
    process = subprocess.Popen(
        [sys.executable, str(ROOT / "cmd/http"), "--serve", "codex", "--port", "0"],
        stderr=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        text=True,
        env=env,
        cwd=work,
    )
    assert process.stderr is not None
    while line := process.stderr.readline():
        found = re.search(r"listening on (http://\S+)", line)
        if found:
            return process, found.group(1)
    raise SystemExit("the server did not start")


async def measure(count: int) -> None:
    model = FakeProvider(echo_prompt())
    runner = web.AppRunner(model.app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
    with tempfile.TemporaryDirectory() as tmp:
        process, url = start_server(Path(tmp), port)
        try:
            await asyncio.sleep(1.0)  # the version check at start has finished
            base_rss = rss_kib(process.pid)
            rows = []
            async with aiohttp.ClientSession() as http:
                sessions = [Session(http, url) for _ in range(count)]
                for index, session in enumerate(sessions):
                    opened = await session.open()
                    cold_event, cold_total = await session.call_codex(2, f"session {index}")
                    warm_event, warm_total = await session.call_codex(3, f"again {index}")
                    rows.append((opened, cold_event, cold_total, warm_event, warm_total))
                await asyncio.sleep(2.0)  # idle: let the app-servers settle
                groups = {pid: group(pid) for pid in children(process.pid)}
                app_rss = {pid: sum(rss_kib(p) for p in members) for pid, members in groups.items()}
                app_pss = {pid: sum(pss_kib(p) for p in members) for pid, members in groups.items()}
                app_uss = {pid: sum(uss_kib(p) for p in members) for pid, members in groups.items()}
                server_rss = rss_kib(process.pid)
                for session in sessions:
                    await session.close()
            report(rows, (app_rss, app_pss, app_uss), groups, base_rss, server_rss)
        finally:
            process.terminate()
            process.wait(15)
            model.release()
            await runner.cleanup()


def report(
    rows: list[tuple[float, ...]],
    memory: tuple[dict[int, int], dict[int, int], dict[int, int]],
    groups: dict[int, list[int]],
    base_rss: int,
    server_rss: int,
) -> None:
    ms = [[value * 1000 for value in row] for row in rows]
    print(
        "session  initialize  first codex/event (cold)  result (cold)  first event (warm)  result (warm)"
    )
    for index, row in enumerate(ms):
        print(
            f"{index:>7}  {row[0]:>8.0f} ms  {row[1]:>21.0f} ms  {row[2]:>10.0f} ms"
            f"  {row[3]:>15.0f} ms  {row[4]:>10.0f} ms"
        )
    columns = list(zip(*ms, strict=True))
    print(
        "median   "
        + "  ".join(f"{statistics.median(column):.0f} ms" for column in columns)
        + "  (initialize, cold event, cold result, warm event, warm result)"
    )
    print()
    app_rss, app_pss, app_uss = memory
    for pid, rss in sorted(app_rss.items()):
        print(
            f"app-server group {pid}: {len(groups[pid])} processes, {rss / 1024:.0f} MB RSS, "
            f"{app_pss[pid] / 1024:.0f} MB PSS, {app_uss[pid] / 1024:.0f} MB private"
        )
    medians = [statistics.median(each.values()) / 1024 if each else 0.0 for each in memory]
    ours = (server_rss - base_rss) / max(1, len(rows))
    print(
        "median per session's app-server: {:.0f} MB RSS, {:.0f} MB PSS, {:.0f} MB private "
        "(private: what one more session adds)".format(*medians)
    )
    print(
        f"our server: {base_rss / 1024:.0f} MB before, {server_rss / 1024:.0f} MB with "
        f"{len(rows)} idle sessions: {ours:.0f} KB per session"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sessions", type=int, default=3, choices=range(1, 9), metavar="1-8")
    args = parser.parse_args()
    if not CODEX.exists():
        raise SystemExit(f"no Codex CLI at {CODEX}: run scripts/setup.sh or set CODEX_BIN")
    asyncio.run(measure(args.sessions))


if __name__ == "__main__":
    main()
