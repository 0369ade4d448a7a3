"""Redis goes away and comes back: readiness fails and requests get 503 with a clear
message meanwhile, then the replicas serve again by themselves, sessions included."""

from __future__ import annotations

import asyncio
import os
import signal
from typing import Any

import aiohttp
import pytest
from http_helpers import SSE_ONLY, call, messages_of, next_event, open_session, text_of
from scale_setup import RedisServer, Replicas
from support.polling import until


async def ready(http: aiohttp.ClientSession, base: str) -> tuple[int, Any]:
    async with http.get(f"{base}/readyz") as response:
        return response.status, await response.json()


@pytest.mark.slow
async def test_redis_stopped_then_restarted(replicas: Replicas, redis_server: RedisServer) -> None:
    a, b, c = replicas(3)  # c sees the session only after Redis came back
    async with aiohttp.ClientSession() as http:
        session = await open_session(http, a.url)
        # Sessions opened at once: b's pool holds several connections to the old Redis.
        await asyncio.gather(*(open_session(http, b.url) for _ in range(8)))
        async with http.post(b.url, json=call(1, "whoami", {}), headers=session) as response:
            assert text_of(await response.json()) == str(b.pid)
        redis_server.stop()

        async def all_unready() -> bool:
            return [(await ready(http, r.base))[0] for r in (a, b, c)] == [503] * 3

        await until(all_unready)
        status, body = await ready(http, a.base)
        assert (status, body["status"]) == (503, "session store unreachable")
        async with http.post(b.url, json=call(2, "whoami", {}), headers=session) as response:
            assert response.status == 503 and response.headers["Retry-After"] == "1"
            assert "Redis" in (await response.json())["error"]["message"]
        async with http.get(f"{a.base}/healthz") as response:
            assert response.status == 200  # alive, just not ready

        redis_server.start()  # empty: no persistence

        async def all_ready() -> bool:
            return [(await ready(http, r.base))[0] for r in (a, b, c)] == [200] * 3

        await until(all_ready)
        # The session goes on, on any replica: those that held it stored it again.
        for index, replica in enumerate((a, b, c)):
            body = call(10 + index, "echo", {"message": f"back {index}"})
            async with http.post(replica.url, json=body, headers=session) as response:
                assert response.status == 200, await response.text()
                assert text_of(await response.json()) == f"back {index}"
        # New sessions open at once, whichever pooled connection each save takes: one
        # opened before the restart is stale, and is replaced rather than failing a request.
        await asyncio.gather(*(open_session(http, b.url) for _ in range(8)))


@pytest.mark.slow
async def test_a_session_held_in_memory_outlives_an_empty_redis_restart(
    replicas: Replicas, redis_server: RedisServer
) -> None:
    """Redis comes back empty while the only replica holding the session is paused: another
    replica asked for it waits for the holder to store it again, and serves it (no 404)."""
    a, b = replicas(2)
    async with aiohttp.ClientSession() as http:
        session = await open_session(http, a.url)
        async with http.post(a.url, json=call(1, "whoami", {}), headers=session) as response:
            assert response.status == 200
        os.kill(a.pid, signal.SIGSTOP)
        try:
            redis_server.stop()
            await until(lambda: unready(http, b))
            redis_server.start()  # empty: no persistence
            await until(lambda: is_ready(http, b))
            asked = asyncio.ensure_future(
                http.post(b.url, json=call(2, "whoami", {}), headers=session)
            )
            await asyncio.to_thread(b.wait_for_line, "asking the replicas", 10)
        finally:
            os.kill(a.pid, signal.SIGCONT)
        async with await asked as response:
            assert response.status == 200, await response.text()
            assert text_of(await response.json()) == str(b.pid)
        async with http.post(a.url, json=call(3, "whoami", {}), headers=session) as response:
            assert response.status == 200, await response.text()


async def unready(http: aiohttp.ClientSession, replica: Any) -> bool:
    return (await ready(http, replica.base))[0] == 503


async def is_ready(http: aiohttp.ClientSession, replica: Any) -> bool:
    return (await ready(http, replica.base))[0] == 200


@pytest.mark.slow
async def test_a_resumed_call_whose_replica_was_killed_ends_with_an_error(
    replicas: Replicas,
) -> None:
    """The replica running a call is SIGKILLed; the client resumes the call's stream on
    another replica: it gets an error for that request within seconds (the dead replica's
    heartbeat expired), not keepalives for ever."""
    a, b = replicas(2, "--keepalive-interval", "0.5")
    async with aiohttp.ClientSession() as http:
        session = await open_session(http, a.url, version="2025-11-25")
        async with http.post(a.url, json=call(7, "slow", {"seconds": 60}), headers=session) as r:
            priming = await next_event(r, timeout=10)
            assert priming is not None and priming["id"].endswith("_0")
            # The stream opened with the first keepalive; by the second, what the replica
            # stored on opening it (the request's id) is stored.
            for _ in range(2):
                assert await next_event(r, timeout=10) == {"comment": "keepalive"}
            os.kill(a.pid, signal.SIGKILL)
        resume = {**session, **SSE_ONLY, "Last-Event-ID": priming["id"]}
        started = asyncio.get_running_loop().time()
        async with http.get(b.url, headers=resume) as stream:
            assert stream.status == 200
            messages = await messages_of(stream, timeout=20)
        elapsed = asyncio.get_running_loop().time() - started
    assert [m.get("id") for m in messages] == [7]
    assert "stopped before answering" in messages[0]["error"]["message"]
    assert elapsed < 15
