"""Load over stdio: spawn the server, time its first answer, then call it."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import orjson

from .stats import cpu_us_per, sample_process, timed_one_at_a_time

INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 0,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "codex-mcp-bench", "version": "1"},
    },
}
INITIALIZED = b'{"jsonrpc":"2.0","method":"notifications/initialized"}'


class StdioPeer:
    def __init__(self, process: asyncio.subprocess.Process) -> None:
        self.process = process
        self.next_id = 1

    def send(self, method: str, params: dict[str, Any] | None = None) -> int:
        assert self.process.stdin is not None
        self.next_id += 1
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": self.next_id, "method": method}
        if params is not None:
            message["params"] = params
        self.process.stdin.write(orjson.dumps(message) + b"\n")
        return self.next_id

    async def response(self) -> dict[str, Any]:
        """The next response (notifications are skipped)."""
        assert self.process.stdout is not None
        while True:
            line = await self.process.stdout.readline()
            if not line:
                raise ConnectionError("the server closed its stdout")
            message: dict[str, Any] = orjson.loads(line)
            if "id" in message and "method" not in message:
                return message


async def spawn(command: list[str], env: dict[str, str] | None) -> tuple[StdioPeer, float]:
    started = time.perf_counter()
    process = await asyncio.create_subprocess_exec(
        *command,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.DEVNULL,
        env=env,
        limit=256 * 1024 * 1024,
    )
    assert process.stdin is not None
    process.stdin.write(orjson.dumps(INITIALIZE) + b"\n")
    peer = StdioPeer(process)
    await asyncio.wait_for(peer.response(), 30)
    cold_start = time.perf_counter() - started
    process.stdin.write(INITIALIZED + b"\n")
    return peer, cold_start


async def measure(
    command: list[str],
    *,
    method: str = "tools/call",
    params: dict[str, Any] | None = None,
    sequential: int = 1000,
    calls: int = 10000,
    in_flight: int = 32,
    max_seconds: float = 30.0,
    env: dict[str, str] | None = None,
    progress: Any = None,
) -> dict[str, Any]:
    peer, cold_start = await spawn(command, env)
    try:
        deadline = time.perf_counter() + max_seconds

        async def call() -> dict[str, Any]:
            peer.send(method, params)
            return await peer.response()

        latency = await timed_one_at_a_time(call, sequential, deadline)
        before = sample_process(peer.process.pid)
        started, client_cpu = time.perf_counter(), time.process_time()
        sent, answered = min(in_flight, calls), 0
        for _ in range(sent):
            peer.send(method, params)
        while answered < sent:
            await peer.response()
            answered += 1
            if sent < calls and time.perf_counter() < deadline:
                peer.send(method, params)
                sent += 1
            if progress is not None and answered % 1000 == 0:
                progress(answered, calls)
        elapsed = time.perf_counter() - started
        client_cpu = time.process_time() - client_cpu
        after = sample_process(peer.process.pid)
        return {
            "cold_start_ms": cold_start * 1000,
            **latency,
            "throughput_per_s": answered / elapsed,
            "pipelined_calls": answered,
            "in_flight": in_flight,
            "cpu_us_per_call": cpu_us_per(before, after, answered),
            "client_cpu_us_per_call": client_cpu / answered * 1e6,
            "rss_mb": after.rss_bytes / 1e6 if after else None,
        }
    finally:
        await close(peer.process)


async def close(process: asyncio.subprocess.Process) -> None:
    if process.stdin is not None:
        process.stdin.close()
    try:
        await asyncio.wait_for(process.wait(), 5)
    except TimeoutError:
        process.kill()
        await process.wait()
