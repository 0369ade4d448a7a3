"""Load over Streamable HTTP: sessions, sequential latency, concurrent throughput."""

from __future__ import annotations

import asyncio
import contextlib
import time
from typing import Any

import aiohttp
import orjson

from .stats import cpu_us_per, sample_process, timed_one_at_a_time
from .stdio_load import INITIALIZE, INITIALIZED

HEADERS = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}


async def read_answer(response: aiohttp.ClientResponse) -> tuple[dict[str, Any], int]:
    """The JSON-RPC response in a JSON or SSE answer, and how many notifications came first."""
    if response.content_type != "text/event-stream":
        return orjson.loads(await response.read()), 0
    notifications = 0
    async for raw in response.content:
        line = raw.strip()
        if not line.startswith(b"data:") or len(line) <= 5:
            continue
        message: dict[str, Any] = orjson.loads(line[5:])
        if "id" in message and "method" not in message:
            return message, notifications
        notifications += 1
    raise ConnectionError("the SSE stream ended without a response")


class HttpSession:
    """One MCP session over Streamable HTTP, parsing JSON or SSE answers."""

    def __init__(self, http: aiohttp.ClientSession, url: str) -> None:
        self.http = http
        self.url = url
        self.headers = dict(HEADERS)
        self.next_id = 0
        self.notifications = 0

    async def open(self) -> None:
        async with self.http.post(
            self.url, data=orjson.dumps(INITIALIZE), headers=self.headers
        ) as r:
            r.raise_for_status()
            session_id = r.headers.get("Mcp-Session-Id")
            await self._answer(r)
        if session_id:
            self.headers["Mcp-Session-Id"] = session_id
        self.headers["MCP-Protocol-Version"] = "2025-06-18"
        async with self.http.post(self.url, data=INITIALIZED, headers=self.headers) as r:
            await r.read()

    async def request(self, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        self.next_id += 1
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": self.next_id, "method": method}
        if params is not None:
            message["params"] = params
        async with self.http.post(self.url, data=orjson.dumps(message), headers=self.headers) as r:
            r.raise_for_status()
            return await self._answer(r)

    async def _answer(self, response: aiohttp.ClientResponse) -> dict[str, Any]:
        answer, notifications = await read_answer(response)
        self.notifications += notifications
        return answer

    async def close(self) -> None:
        if "Mcp-Session-Id" in self.headers:
            async with self.http.delete(self.url, headers=self.headers) as r:
                await r.read()


async def measure(
    url: str,
    *,
    method: str = "tools/call",
    params: dict[str, Any] | None = None,
    sequential: int = 1000,
    calls: int = 5000,
    concurrency: int = 32,
    max_seconds: float = 30.0,
    pid: int | None = None,
    connection_per_session: bool = False,
) -> dict[str, Any]:
    """Latency of sequential calls, then throughput of `concurrency` sessions calling at
    once. With `connection_per_session` each session keeps its own connection, as separate
    clients do (a server of several workers then sees each session on one of them);
    otherwise the sessions share one pool, so a session's calls move between connections."""
    connector = aiohttp.TCPConnector(limit=concurrency + 8)
    async with (
        contextlib.AsyncExitStack() as own,
        aiohttp.ClientSession(connector=connector) as http,
    ):

        async def client() -> aiohttp.ClientSession:
            if not connection_per_session:
                return http
            alone = aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=1))
            return await own.enter_async_context(alone)

        session = HttpSession(await client(), url)
        await session.open()
        deadline = time.perf_counter() + max_seconds
        latency = await timed_one_at_a_time(
            lambda: session.request(method, params), sequential, deadline
        )
        workers = [HttpSession(await client(), url) for _ in range(concurrency)]
        await asyncio.gather(*(w.open() for w in workers))
        # Each session's first call before the clock: a server of several processes
        # otherwise does each one's first-call work (a first tools/call imports what
        # validation needs: 10-30 ms of CPU) in the measured phase, where one process did
        # it in the sequential phase above.
        await asyncio.gather(*(w.request(method, params) for w in workers))
        before = sample_process(pid) if pid else None
        remaining = [calls]

        async def work(worker: HttpSession) -> int:
            done = 0
            while remaining[0] > 0 and time.perf_counter() < deadline:
                remaining[0] -= 1
                await worker.request(method, params)
                done += 1
            return done

        started = time.perf_counter()
        answered = sum(await asyncio.gather(*(work(w) for w in workers)))
        elapsed = time.perf_counter() - started
        after = sample_process(pid) if pid else None
        return {
            **latency,
            "throughput_per_s": answered / elapsed,
            "concurrent_calls": answered,
            "concurrency": concurrency,
            "cpu_us_per_call": cpu_us_per(before, after, answered),
            "rss_mb": after.rss_bytes / 1e6 if after else None,
        }


async def many_sessions(
    url: str, *, sessions: int = 1000, pid: int | None = None, parallel: int = 50
) -> dict[str, Any]:
    """Open many sessions and keep them; then one echo call on each, checking no cross-talk.

    One call on a session of its own comes first, untimed in the phases, as every other case
    warms up: a server's first tools/call does its one-time work (the first validator imports
    pydantic-core, ~12 ms), which would otherwise count in the call phase (about 10% of it at
    1,000 sessions). That first call's time is `first_call_ms`."""
    echo = {"name": "echo", "arguments": {"message": "first"}}
    connector = aiohttp.TCPConnector(limit=parallel)
    async with aiohttp.ClientSession(connector=connector) as http:
        first = HttpSession(http, url)
        await first.open()
        started = time.perf_counter()
        await first.request("tools/call", echo)
        first_call_seconds = time.perf_counter() - started
        await first.close()
        before = sample_process(pid) if pid else None
        opened = [HttpSession(http, url) for _ in range(sessions)]
        gate = asyncio.Semaphore(parallel)

        async def open_one(session: HttpSession) -> None:
            async with gate:
                await session.open()

        started = time.perf_counter()
        await asyncio.gather(*(open_one(s) for s in opened))
        open_seconds = time.perf_counter() - started
        after_open = sample_process(pid) if pid else None

        async def call_one(index: int, session: HttpSession) -> bool:
            async with gate:
                reply = await session.request(
                    "tools/call", {"name": "echo", "arguments": {"message": f"session-{index}"}}
                )
            text = reply.get("result", {}).get("content", [{}])[0].get("text")
            return bool(text == f"session-{index}")

        started = time.perf_counter()
        correct = sum(await asyncio.gather(*(call_one(i, s) for i, s in enumerate(opened))))
        call_seconds = time.perf_counter() - started
        after_calls = sample_process(pid) if pid else None
        per_session = (
            (after_open.rss_bytes - before.rss_bytes) / sessions if before and after_open else None
        )
        return {
            "sessions": sessions,
            "open_per_s": sessions / open_seconds,
            "calls_per_s": sessions / call_seconds,
            # The server's CPU in the call phase (/proc's 10 ms ticks: coarse at 200 sessions).
            "cpu_us_per_call": cpu_us_per(after_open, after_calls, sessions),
            "first_call_ms": first_call_seconds * 1000,
            "correct_answers": correct,
            "rss_kb_per_idle_session": per_session / 1024 if per_session is not None else None,
            "rss_mb": after_open.rss_bytes / 1e6 if after_open else None,
        }


async def progress_rate(url: str, count: int = 2000) -> dict[str, Any]:
    """Notifications per second arriving over SSE during one call that streams progress."""
    async with aiohttp.ClientSession() as http:
        session = HttpSession(http, url)
        await session.open()
        started = time.perf_counter()
        await session.request(
            "tools/call",
            {
                "name": "stream_progress",
                "arguments": {"count": count},
                "_meta": {"progressToken": 1},
            },
        )
        elapsed = time.perf_counter() - started
        return {
            "notifications": session.notifications,
            "notifications_per_s": session.notifications / elapsed,
        }
