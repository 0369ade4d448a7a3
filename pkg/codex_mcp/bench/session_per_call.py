"""Load where every call is a whole legacy session: the shape of TM Dev Lab's MCP server
benchmark v2, checked as its k6 script does, and counted as it counts: initialize, tools/call
and tools/list, not the notification or the DELETE (specs/performance.md, "A session per
call")."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import aiohttp
import orjson

from .http_load import HEADERS, read_answer
from .stats import cpu_us_per, percentile, sample_process
from .stdio_load import INITIALIZED

INITIALIZE = orjson.dumps(
    {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2024-11-05",
            "capabilities": {},
            "clientInfo": {"name": "k6-bench", "version": "1.0"},
        },
    }
)


@dataclass(frozen=True)
class Call:
    method: str
    params: dict[str, Any]
    #: True when the result is right (the benchmark's k6 check).
    check: Callable[[dict[str, Any]], bool]


def _text(result: dict[str, Any]) -> Any:
    return orjson.loads(result["content"][0]["text"])


def tm_v2_calls(user: int) -> list[Call]:
    """Virtual user `user`'s iteration: its three tool calls and the tools/list."""
    user_id = f"user-{user % 1000:05d}"

    def search(r: dict[str, Any]) -> bool:
        found = _text(r)
        return bool(
            found["total_found"] == 2251
            and len(found["products"]) == 10
            and len(found["top10_popular_ids"]) == 10
        )

    def cart(r: dict[str, Any]) -> bool:
        found = _text(r)
        return bool(
            found["user_id"] and found["cart"]["items"] and len(found["recent_history"]) == 5
        )

    def checkout(r: dict[str, Any]) -> bool:
        found = _text(r)
        return bool(
            found["status"] == "confirmed" and found["total"] > 0 and found["items_count"] == 2
        )

    items = [{"product_id": 42, "quantity": 2}, {"product_id": 1337, "quantity": 1}]
    tool = "tools/call"
    return [
        Call(
            tool,
            {
                "name": "search_products",
                "arguments": {
                    "category": "Electronics",
                    "min_price": 50.0,
                    "max_price": 500.0,
                    "limit": 10,
                },
            },
            search,
        ),
        Call(tool, {"name": "get_user_cart", "arguments": {"user_id": user_id}}, cart),
        Call(
            tool, {"name": "checkout", "arguments": {"user_id": user_id, "items": items}}, checkout
        ),
        Call("tools/list", {}, lambda r: bool(r.get("tools"))),
    ]


def echo_calls(user: int) -> list[Call]:
    """The same shape with no backend behind the tool: what a session's creation and
    deletion cost the server shows alone (an `echo` tool, then tools/list)."""
    message = f"user {user}"
    return [
        Call(
            "tools/call",
            {"name": "echo", "arguments": {"message": message}},
            lambda r: bool(r["content"][0]["text"] == message),
        ),
        Call("tools/list", {}, lambda r: bool(r.get("tools"))),
    ]


@dataclass
class _Tally:
    measuring: bool = False
    requests: int = 0
    http_requests: int = 0
    calls: int = 0
    sessions: int = 0
    errors: int = 0
    iterations: int = 0


async def _session(
    http: aiohttp.ClientSession, url: str, call: Call, tally: _Tally, latencies: list[float]
) -> None:
    """One whole session for one call; counted when the measurement is on."""
    async with http.post(url, data=INITIALIZE, headers=HEADERS) as response:
        response.raise_for_status()
        session_id = response.headers.get("Mcp-Session-Id")
        await read_answer(response)
    headers = dict(HEADERS)
    if session_id:
        headers["Mcp-Session-Id"] = session_id
    async with http.post(url, data=INITIALIZED, headers=headers) as response:
        await response.read()
    message = {"jsonrpc": "2.0", "id": 2, "method": call.method, "params": call.params}
    started = time.perf_counter()
    async with http.post(url, data=orjson.dumps(message), headers=headers) as response:
        answer, _ = await read_answer(response)
    took = time.perf_counter() - started
    if session_id:
        async with http.delete(url, headers={"Mcp-Session-Id": session_id}) as response:
            await response.read()
    try:
        ok = "result" in answer and call.check(answer["result"])
    except (KeyError, IndexError, TypeError, ValueError):
        ok = False
    if tally.measuring:
        tally.requests += 2
        tally.http_requests += 4 if session_id else 3
        tally.sessions += 1
        tally.errors += not ok
        if call.method == "tools/call":
            tally.calls += 1
            latencies.append(took)


async def measure(
    url: str,
    *,
    users: int = 50,
    seconds: float = 20.0,
    warmup: float = 3.0,
    max_iterations: int = 200_000,
    pause: float = 0.05,
    pid: int | None = None,
    calls: Callable[[int], list[Call]] = tm_v2_calls,
) -> dict[str, Any]:
    """`users` virtual users for `warmup` seconds (not counted), then `seconds` measured;
    at most `max_iterations` iterations in all."""
    tally = _Tally()
    latencies: list[float] = []
    budget = [max_iterations]
    stop = time.perf_counter() + warmup + seconds
    connector = aiohttp.TCPConnector(limit=users + 8)
    async with aiohttp.ClientSession(connector=connector) as http:

        async def user(number: int) -> None:
            plan = calls(number)
            while budget[0] > 0 and time.perf_counter() < stop:
                budget[0] -= 1
                for call in plan:
                    await _session(http, url, call, tally, latencies)
                tally.iterations += tally.measuring
                await asyncio.sleep(pause)

        everyone = asyncio.gather(*(user(n) for n in range(1, users + 1)))
        await asyncio.wait([everyone], timeout=warmup)
        tally.measuring, started = True, time.perf_counter()
        before = sample_process(pid) if pid else None
        # Until the time is up, or the iteration budget ran out.
        await asyncio.wait([everyone], timeout=max(0.0, stop - time.perf_counter()))
        tally.measuring = False
        elapsed = time.perf_counter() - started
        after = sample_process(pid) if pid else None
        await everyone
    if not tally.requests or tally.errors > tally.sessions // 100:
        raise RuntimeError(f"{tally.errors} of {tally.sessions} sessions answered wrongly")
    return {
        "requests_per_s": tally.requests / elapsed,
        "calls_per_s": tally.calls / elapsed,
        "sessions_per_s": tally.sessions / elapsed,
        "http_requests_per_s": tally.http_requests / elapsed,
        "p50_ms": percentile(latencies, 0.5) * 1000,
        "p99_ms": percentile(latencies, 0.99) * 1000,
        "cpu_us_per_request": cpu_us_per(before, after, tally.requests),
        "rss_mb": after.rss_bytes / 1e6 if after else None,
        "requests": tally.requests,
        "errors": tally.errors,
        "iterations": tally.iterations,
        "users": users,
    }
