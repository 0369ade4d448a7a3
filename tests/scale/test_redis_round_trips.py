"""What replicas ask of Redis, counted by Redis itself (INFO commandstats): events are
appended with EVALSHA and no SCRIPT EXISTS per pipeline (a Redis that lost the script gets
it again), and ending a session does not load it first; and what each reply costs to read."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import aiohttp
import pytest
import redis.asyncio as redis
from codex_mcp.scale.redis_store import RedisStore
from http_helpers import SSE_ONLY, call, open_session
from scale_setup import RedisServer, Replicas, Trio
from test_shared_sessions import JSON_ONLY, data_events, log_data, post
from topologies import ONE_SERVER, backend, backend_params


@pytest.fixture(params=backend_params(*ONE_SERVER))
def redis_server(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[RedisServer]:
    """One server's URL (its keys are read here): Redis and Valkey, not the Cluster."""
    with backend(request.param, tmp_path) as server:
        yield server  # type: ignore[misc]


async def commands(client: Any) -> dict[str, int]:
    stats = await client.info("commandstats")
    return {name.removeprefix("cmdstat_"): int(v["calls"]) for name, v in stats.items()}


async def test_events_use_evalsha_and_survive_a_flushed_script_cache(
    trio_on_one_server: Trio,
) -> None:
    a = trio_on_one_server[0]
    client = redis.Redis.from_url(trio_on_one_server.server.url)
    try:
        async with aiohttp.ClientSession() as http:
            session = await open_session(http, a.url)
            json_only = {**session, **JSON_ONLY}
            async with http.get(a.url, headers={**session, **SSE_ONLY}) as stream:
                await post(http, a.url, call(2, "emit", {"count": 3, "tag": "a"}), json_only)
                assert [log_data(e) for e in await data_events(stream, 3)] == ["a-1", "a-2", "a-3"]
                await client.script_flush()  # as a restarted Redis would have it
                await post(http, a.url, call(3, "emit", {"count": 2, "tag": "b"}), json_only)
                assert [log_data(e) for e in await data_events(stream, 2)] == ["b-1", "b-2"]
        counted = await commands(client)
        assert counted.get("script|exists", 0) == 0, counted
        assert counted.get("evalsha", 0) >= 5
    finally:
        await client.aclose()


async def test_ending_a_session_does_not_load_it_and_forgets_its_subscriptions(
    trio_on_one_server: Trio,
) -> None:
    a, b, _ = trio_on_one_server
    client = redis.Redis.from_url(trio_on_one_server.server.url)
    try:
        async with aiohttp.ClientSession() as http:
            session = await open_session(http, a.url)
            sid = session["Mcp-Session-Id"]
            for index, uri in enumerate(("note://x", "note://y")):
                subscribe = {"jsonrpc": "2.0", "id": 10 + index, "method": "resources/subscribe"}
                subscribe["params"] = {"uri": uri}
                assert (await post(http, a.url, subscribe, session))[0] == 200
            unsubscribe = {"jsonrpc": "2.0", "id": 12, "method": "resources/unsubscribe"}
            unsubscribe["params"] = {"uri": "note://x"}
            assert (await post(http, b.url, unsubscribe, session))[0] == 200
            assert await client.smembers("codex-mcp:sub:note://x") == set()
            assert await client.smembers("codex-mcp:sub:note://y") == {sid.encode()}
            before = await commands(client)
            async with http.delete(a.url, headers=session) as response:
                assert response.status == 200
            after = await commands(client)
        assert after.get("hgetall", 0) == before.get("hgetall", 0)
        assert await client.smembers("codex-mcp:sub:note://y") == set()
        assert await client.exists(f"codex-mcp:s:{sid}") == 0
    finally:
        await client.aclose()


def test_the_store_reads_replies_with_hiredis() -> None:
    """Every command and bus message a replica gets back is parsed: with redis-py's own
    parser an HGETALL of a session cost 133 us of the replica's CPU, with hiredis's C
    parser 77 (the `redis` extra installs it)."""
    store = RedisStore("redis://127.0.0.1:6379/0", replay_events=10, session_ttl=60)
    for client in (store.redis, store.backend.line("codex-mcp:bus")):
        connection = client.connection_pool.make_connection()  # its parser is chosen already
        assert type(connection._parser).__name__ == "_AsyncHiredisParser"


async def test_a_session_opened_and_deleted_costs_three_pipelines_and_two_publishes(
    replicas: Replicas, redis_server: RedisServer
) -> None:
    """A client that makes a session per call pays Redis for its two saves (initialize,
    initialized) and its end: a pipeline each (one round trip), no MULTI/EXEC, no script
    (each key of a save may be on another Cluster node); and the first save is not
    published, since no other replica can hold the session before its id is given out."""
    (a,) = replicas(1)
    client = redis.Redis.from_url(redis_server.url)
    try:
        async with aiohttp.ClientSession() as http:
            for _ in range(2):  # the second as the first
                before = await commands(client)
                session = await open_session(http, a.url)
                async with http.delete(a.url, headers=session) as response:
                    assert response.status in (200, 204)
                after = await commands(client)
        made = {name: n - before.get(name, 0) for name, n in after.items()}
        assert made.get("evalsha", 0) == made.get("eval", 0) == 0, made
        assert made.get("multi", 0) == made.get("exec", 0) == 0, made
        assert made.get("publish") == 2, made  # the initialized state, and the end
        assert made.get("hset") == 2 and made.get("del") == 1, made
    finally:
        await client.aclose()
