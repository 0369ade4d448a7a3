"""What every benchmark case shares: where things are, free ports, starting an HTTP server
and waiting until it serves, and the median of several runs."""

from __future__ import annotations

import asyncio
import contextlib
import socket
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import aiohttp
from codex_mcp.bench import http_load

BENCH = Path(__file__).resolve().parent
ROOT = BENCH.parent
PY = sys.executable
ECHO = {"name": "echo", "arguments": {"message": "hello world"}}


def compiled(tree: Path) -> None:
    """Write the bytecode of a checkout's Python files, as `pip install` does. Without it a
    cold start under PYTHONDONTWRITEBYTECODE (or in a fresh baseline worktree) compiles every
    module it imports, every time, and measures the compiler instead of the start."""
    folders = [
        str(tree / name) for name in ("pkg", "internal", "cmd", "bench") if (tree / name).is_dir()
    ]
    subprocess.run([PY, "-m", "compileall", "-q", *folders], check=True, stdout=subprocess.DEVNULL)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextlib.contextmanager
def http_server(command: list[str], env: dict[str, str]) -> Iterator[tuple[str, int, float]]:
    """Start an HTTP server; yields (url, pid, seconds until it answered initialize)."""
    port = free_port()
    started = time.perf_counter()
    process = subprocess.Popen(
        [c.replace("{port}", str(port)) for c in command],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    url = f"http://127.0.0.1:{port}/mcp"
    try:
        cold = asyncio.run(_wait_ready(url, process, started))
        yield url, process.pid, cold
    finally:
        process.terminate()
        try:
            process.wait(10)
        except subprocess.TimeoutExpired:
            process.kill()


async def _wait_ready(url: str, process: subprocess.Popen[bytes], started: float) -> float:
    async with aiohttp.ClientSession() as http:
        for _ in range(600):
            if process.poll() is not None:
                raise RuntimeError(f"exited with {process.returncode}")
            with contextlib.suppress(aiohttp.ClientError, OSError):
                session = http_load.HttpSession(http, url)
                await session.open()
                return time.perf_counter() - started
            await asyncio.sleep(0.02)
    raise RuntimeError("did not answer within 12 s")


def median_of(runs: int, measure: Callable[[], dict[str, Any]]) -> dict[str, Any]:
    return medians([measure() for _ in range(runs)])


def medians(results: list[dict[str, Any]]) -> dict[str, Any]:
    """Each figure's median over the runs (a figure that is not a number: the first run's)."""
    merged: dict[str, Any] = {}
    for key in results[0]:
        values = [r[key] for r in results if isinstance(r.get(key), int | float)]
        merged[key] = statistics.median(values) if values else results[0][key]
    return merged


def write_block(doc: Path, name: str, text: str) -> None:
    """Replace the text between `<!-- bench:NAME -->` and `<!-- /bench:NAME -->` in `doc`
    (the README, a spec): figures written by the bench, never by hand."""
    content = doc.read_text()
    start, end = f"<!-- bench:{name} -->", f"<!-- /bench:{name} -->"
    if start not in content or end not in content:
        print(f"  {doc.name} has no {start} block: not written", file=sys.stderr)
        return
    head, rest = content.split(start, 1)
    tail = rest.split(end, 1)[1]
    doc.write_text(f"{head}{start}\n{text}\n{end}{tail}")
