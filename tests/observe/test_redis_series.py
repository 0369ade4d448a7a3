"""Redis series (`codex_mcp_redis_available`, `codex_mcp_redis_round_trip_seconds`) are
exported by a server that has Redis (`--redis-url`) and by no other: an alert on
`codex_mcp_redis_available == 0` must not fire on every deployment without Redis."""

from __future__ import annotations

import asyncio
import time

import pytest
from http_process import HttpProcess
from observe_helpers import Samples, scrape, value
from scale_setup import REDIS, SERVING, RedisServer

REDIS_FAMILIES = ("codex_mcp_redis_available", "codex_mcp_redis_round_trip_seconds")


def redis_series(samples: Samples) -> list[str]:
    return sorted({name for name, _ in samples if name.startswith(REDIS_FAMILIES)})


async def test_a_server_without_redis_exports_no_redis_series() -> None:
    server = HttpProcess()
    try:
        samples = await scrape(f"{server.base}/metrics")
        assert value(samples, "codex_mcp_sessions_live", era="session") == 0  # scraped
        assert redis_series(samples) == []
        assert redis_series(await scrape(f"{server.base}/metrics")) == []  # and again
    finally:
        server.stop()


@pytest.mark.skipif(REDIS is None, reason="redis-server not installed")
async def test_a_server_with_redis_exports_its_availability_and_round_trips() -> None:
    redis = RedisServer()
    server = HttpProcess("--redis-url", redis.url)
    try:
        deadline = time.monotonic() + 20
        while not any(SERVING in line for line in server.lines):
            assert time.monotonic() < deadline, server.stderr
            await asyncio.sleep(0.05)
        samples = await scrape(f"{server.base}/metrics")
        assert value(samples, "codex_mcp_redis_available") == 1
        assert value(samples, "codex_mcp_redis_round_trip_seconds_count") >= 1
        redis.stop()
        deadline = time.monotonic() + 20
        while value(samples := await scrape(f"{server.base}/metrics"), "codex_mcp_redis_available"):
            assert time.monotonic() < deadline, "Redis stopped, still available"
            await asyncio.sleep(0.1)
        assert ("codex_mcp_redis_available", ()) in samples  # 0, not absent
    finally:
        server.stop()
        redis.stop()
