"""The session-per-call cases of the benchmark suite (bench/run.py).

`TM Dev Lab v2`: the published MCP server benchmark v2's workload (every tool call a whole
session; 50 virtual users; three tools doing parallel I/O against Redis and a product API)
served by codex-mcp (one process, and `--workers 2` with sessions on Redis) and by that
benchmark's Python server, the official SDK's FastMCP (`mcp<2`, stateless, JSON answers,
uvicorn with uvloop, one and two workers), their tools written once (tm_v2/workload.py) on
the same shared aiohttp session and Redis client. The bench starts a real redis-server,
seeds it as the benchmark does, and stands in for its product API with aiohttp.

`HTTP session per call`: the same load against the echo servers, no backend: what a
session's creation and deletion cost, alone.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import subprocess
import sys
import time
import urllib.request
from collections.abc import Callable, Iterator
from typing import Any

from codex_mcp.bench import session_per_call
from harness import BENCH, PY, ROOT, free_port, http_server, median_of
from scale_cases import redis_server

TM_VENV = BENCH / ".venv-tm"
TM_PY = str(TM_VENV / "bin/python")
TM = BENCH / "tm_v2"
TM_LABEL = "TM Dev Lab v2, session per call"
ECHO_LABEL = "HTTP session per call"
Rows = list[tuple[str, dict[str, Any]]]


def install_tm_peer() -> None:
    """The benchmark's Python server imports `mcp.server.fastmcp`, gone in `mcp` 2."""
    if not (TM_VENV / "bin/python").exists():
        subprocess.run([sys.executable, "-m", "venv", str(TM_VENV)], check=True)
        subprocess.run(
            [
                str(TM_VENV / "bin/pip"),
                "install",
                "-q",
                "mcp<2",
                "uvicorn[standard]",
                "aiohttp",
                "redis",
            ],
            check=True,
        )


@contextlib.contextmanager
def product_api() -> Iterator[str]:
    port = free_port()
    process = subprocess.Popen(
        [PY, str(TM / "api.py"), str(port)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 20
        while True:
            try:
                urllib.request.urlopen(f"{url}/health", timeout=1).close()
                break
            except OSError:
                if process.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError("the product API did not start") from None
                time.sleep(0.05)
        yield url
    finally:
        process.terminate()
        process.wait(10)


def _tm_servers(redis_url: str) -> list[tuple[str, list[str]]]:
    ours = [PY, str(ROOT / "cmd/http"), "--serve", str(TM / "ours.py"), "--port", "{port}"]
    ours += ["--log-level", "warning"]
    sdk = [TM_PY, "-m", "uvicorn", "sdk_server:app", "--app-dir", str(TM), "--host", "127.0.0.1"]
    sdk += ["--port", "{port}", "--loop", "uvloop", "--no-access-log", "--log-level", "warning"]
    sessions = redis_url.rsplit("/", 1)[0] + "/1"  # --workers' sessions, beside the data
    return [
        ("codex-mcp", ours),
        ("codex-mcp --workers 2", [*ours, "--workers", "2", "--redis-url", sessions]),
        ("official SDK FastMCP", [*sdk, "--workers", "1"]),
        ("official SDK FastMCP, 2 workers", [*sdk, "--workers", "2"]),
    ]


def session_cases(
    chosen: Callable[[str], bool], *, runs: int, quick: bool, echo_servers: list[Any]
) -> Iterator[tuple[str, Rows]]:
    seconds, warmup = (5.0, 1.0) if quick else (10.0, 2.0)

    def load(command: list[str], env: dict[str, str] | None, calls: Any, pause: float) -> Any:
        def once() -> dict[str, Any]:
            with http_server(command, env) as (url, pid, _):
                return asyncio.run(
                    session_per_call.measure(
                        url, seconds=seconds, warmup=warmup, pid=pid, calls=calls, pause=pause
                    )
                )

        return median_of(runs, once)

    if chosen(ECHO_LABEL):
        rows: Rows = []
        with redis_server() as redis_url:
            setups = [(server.name, server, []) for server in echo_servers]
            if redis_url is not None:  # ours again, with the sessions on Redis
                setups += [
                    (f"{server.name}, Redis", server, ["--redis-url", redis_url])
                    for server in echo_servers
                    if server.name.startswith("codex-mcp")
                ]
            for name, server, extra in setups:
                print(f"  {ECHO_LABEL}: {name} ...", file=sys.stderr, flush=True)
                try:
                    env = {**os.environ, **server.env}
                    command = [*server.http, *extra]
                    rows.append((name, load(command, env, session_per_call.echo_calls, 0.0)))
                except Exception as exc:
                    print(f"    skipped {name}: {exc}", file=sys.stderr)
        yield ECHO_LABEL, rows
    if not chosen(TM_LABEL):
        return
    if not (TM_VENV / "bin/python").exists():
        print("  bench/.venv-tm missing (run without --skip-install)", file=sys.stderr)
    with redis_server() as redis_url, product_api() as api:
        if redis_url is None:
            print("  redis-server not installed: the TM case is skipped", file=sys.stderr)
            return
        from tm_v2.seed import seed

        asyncio.run(seed(redis_url))
        env = {**os.environ, "TM_API_URL": api, "TM_REDIS_URL": redis_url}
        rows = []
        for name, command in _tm_servers(redis_url):
            print(f"  {TM_LABEL}: {name} ...", file=sys.stderr, flush=True)
            try:
                rows.append((name, load(command, env, session_per_call.tm_v2_calls, 0.05)))
            except Exception as exc:
                print(f"    skipped {name}: {exc}", file=sys.stderr)
        sdk = dict(rows).get("official SDK FastMCP", {}).get("requests_per_s")
        for _, figures in rows:
            if sdk:
                figures["x_official_sdk"] = figures["requests_per_s"] / sdk
        yield TM_LABEL, rows
