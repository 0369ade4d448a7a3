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
from codex_mcp.bench import http_load, stdio_load
from codex_mcp.bench.stats import schedstat_seconds

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


#: How often a starting server is tried. The cold start is read to this grain, so it is
#: fine (at 20 ms a start of ~200 ms read up to 10% long, at random), but not so often that
#: the tries take a core from the server starting (a failed connect costs the bench ~0.3 ms).
READY_POLL_SECONDS = 0.005


async def _wait_ready(url: str, process: subprocess.Popen[bytes], started: float) -> float:
    """Seconds from `started` until the server answered initialize (and took initialized):
    every server, ours and the floor alike, is tried the same way."""
    deadline = started + 12
    async with aiohttp.ClientSession() as http:
        while time.perf_counter() < deadline:
            if process.poll() is not None:
                raise RuntimeError(f"exited with {process.returncode}")
            with contextlib.suppress(aiohttp.ClientError, OSError):
                session = http_load.HttpSession(http, url)
                await session.open()
                return time.perf_counter() - started
            await asyncio.sleep(READY_POLL_SECONDS)
    raise RuntimeError("did not answer within 12 s")


#: (name, command, environment) of a server to start; an HTTP command has "{port}".
Started = tuple[str, list[str], dict[str, str]]


def cold_starts(
    servers: list[Started], rounds: int, http: bool
) -> dict[str, tuple[float, float | None]]:
    """Each server's cold start and the CPU it took (ms, medians of `rounds`): the servers
    started in turn, round after round, so a change of the machine's load during the run
    falls on all of them alike (each server's runs one after another, as the other figures
    are taken, let it fall on one server and move the ratios between them). The CPU, the
    process's own until its first answer, moves less with others' load than the wall time.
    A server that fails is left out."""
    times: dict[str, list[float]] = {name: [] for name, _, _ in servers}
    cpu: dict[str, list[float]] = {name: [] for name, _, _ in servers}
    for _ in range(rounds):
        for name, command, env in servers:
            try:
                if http:
                    with http_server(command, env) as (_, pid, seconds):
                        used = cpu_ms(pid)
                else:
                    seconds, used = asyncio.run(_stdio_cold_start(command, env))
            except (RuntimeError, OSError, TimeoutError, ConnectionError) as exc:
                print(f"    cold start of {name} skipped: {exc}", file=sys.stderr)
                continue
            times[name].append(seconds * 1000)
            if used is not None:
                cpu[name].append(used)
    return {
        name: (statistics.median(each), statistics.median(cpu[name]) if cpu[name] else None)
        for name, each in times.items()
        if each
    }


def cpu_ms(pid: int) -> float | None:
    """The CPU a process has used so far (all its threads), to the nanosecond (/proc's
    schedstat; its stat counts 10 ms ticks); None off Linux."""
    seconds = schedstat_seconds(pid)
    return None if seconds is None else seconds * 1000


async def _stdio_cold_start(command: list[str], env: dict[str, str]) -> tuple[float, float | None]:
    peer, seconds = await stdio_load.spawn(command, env)
    used = cpu_ms(peer.process.pid)
    await stdio_load.close(peer.process)
    return seconds, used


def median_of(runs: int, measure: Callable[[], dict[str, Any]]) -> dict[str, Any]:
    return medians([measure() for _ in range(runs)])


def medians(results: list[dict[str, Any]]) -> dict[str, Any]:
    """Each figure's median over the runs (a figure that is not a number: the first run's)."""
    merged: dict[str, Any] = {}
    for key in results[0]:
        values = [r[key] for r in results if isinstance(r.get(key), int | float)]
        merged[key] = statistics.median(values) if values else results[0][key]
    return merged


def stamp(report: dict[str, Any]) -> str:
    """The first line of every generated table: which run wrote it."""
    return (
        f"<!-- generated by bench/run.py --readme ({report['date']}, {report['machine']}, "
        f"{report['machine_note']}) -->"
    )


def write_block(doc: Path, name: str, text: str) -> None:
    """Replace the text between `<!-- bench:NAME -->` and `<!-- /bench:NAME -->` in `doc`
    (the README, a spec): figures written by the bench, never by hand. A table goes on lines
    of its own; one line of text stays inline, inside the sentence that holds its markers."""
    content = doc.read_text()
    start, end = f"<!-- bench:{name} -->", f"<!-- /bench:{name} -->"
    if start not in content or end not in content:
        print(f"  {doc.name} has no {start} block: not written", file=sys.stderr)
        return
    head, rest = content.split(start, 1)
    tail = rest.split(end, 1)[1]
    inner = text if "\n" not in text else f"\n{text}\n"
    doc.write_text(f"{head}{start}{inner}{end}{tail}")
