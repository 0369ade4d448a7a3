"""Where the requestState signing keys come from: configuration (flag, environment, file;
the first signs, all verify), never the shared Redis store, so whoever reads Redis
cannot forge a state; without configured keys each process (or `--workers` supervisor)
makes its own and says once, in one line, what to set."""

from __future__ import annotations

import asyncio
import os
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import aiohttp
import pytest
import redis
from codex_mcp.core.request_state import RequestStateCodec
from http_process import HttpProcess
from scale_setup import SERVING, SHARED, RedisServer, Replicas
from test_stateless_replicas import post, request
from topologies import ONE_SERVER, backend, backend_params

OLD = "the-old-request-state-key-0123456789abcdef"
NEW = "the-new-request-state-key-0123456789abcdef"
THREE_YEARS = 3 * 365 * 24 * 3600.0
NAME = {"name": {"action": "accept", "content": {"name": "Rhea"}}}


@pytest.fixture(params=backend_params(*ONE_SERVER))
def redis_server(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[RedisServer]:
    """One server's URL (its keys are read here): Redis and Valkey, not the Cluster."""
    with backend(request.param, tmp_path) as server:
        yield server  # type: ignore[misc]


def forge(key: bytes, pending: str) -> str:
    """A state signed with `key`, carrying an injected answer and a far expiry."""
    return RequestStateCodec([key], ttl_seconds=THREE_YEARS).issue(
        "tools/call",
        {"name": "ask", "arguments": {}},
        round=1,
        pending=[pending],
        data={"answers": {pending: {"action": "accept", "content": {"name": "Mallory"}}}},
    )


def stored_strings(url: str) -> list[bytes]:
    """Every string value in the store: whatever a reader of Redis could try as a key."""
    client = redis.Redis.from_url(url)
    try:
        return [
            value
            for name in client.scan_iter(count=1000)
            if client.type(name) == b"string" and (value := client.get(name)) is not None
        ]
    finally:
        client.close()


@pytest.mark.slow
async def test_a_state_forged_with_what_redis_holds_is_refused(
    replicas: Replicas, redis_server: RedisServer
) -> None:

    a, b = replicas(2)  # no keys configured
    async with aiohttp.ClientSession() as http:
        first = (await post(http, a.url, request(1, "tools/call", name="ask", arguments={})))[
            "result"
        ]
        (pending,) = first["inputRequests"]
        candidates = [value for value in stored_strings(redis_server.url) if len(value) >= 32]
        for index, value in enumerate(candidates):
            for key in {value, value.strip()}:
                forged = forge(key, pending)
                for replica in (a, b):
                    retry = request(
                        10 + index, "tools/call", name="ask", arguments={}, requestState=forged
                    )
                    refused = await post(http, replica.url, retry)
                    assert refused.get("error", {}).get("data") == {"reason": "tampered"}, refused
    for replica in (a, b):  # each replica said once what to set
        warnings = [line for line in replica.lines if "CODEX_MCP_REQUEST_STATE_KEYS" in line]
        assert len(warnings) == 1, replica.stderr


@pytest.mark.slow
async def test_keys_rotate_the_old_one_still_verifies_the_new_one_signs(tmp_path: Path) -> None:
    before = HttpProcess("--serve", SHARED, env={**os.environ, "CODEX_MCP_REQUEST_STATE_KEYS": OLD})
    try:
        async with aiohttp.ClientSession() as http:
            first = (
                await post(http, before.url, request(1, "tools/call", name="ask", arguments={}))
            )["result"]
    finally:
        before.stop()
    assert "requestState keys" not in before.stderr  # one process without Redis: no warning
    keys_file = tmp_path / "keys"
    keys_file.write_text(f"{NEW}\n{OLD}\n")
    after = HttpProcess("--serve", SHARED, "--request-state-keys-file", str(keys_file))
    try:
        async with aiohttp.ClientSession() as http:
            retry = request(
                2,
                "tools/call",
                name="ask",
                arguments={},
                inputResponses={key: NAME["name"] for key in first["inputRequests"]},
                requestState=first["requestState"],
            )
            done = (await post(http, after.url, retry))["result"]
            assert done["content"][0]["text"] == f"hello Rhea from {after.pid}"
            fresh = (
                await post(http, after.url, request(3, "tools/call", name="ask", arguments={}))
            )["result"]
    finally:
        after.stop()
    call = {"name": "ask", "arguments": {}}
    signed = RequestStateCodec([NEW]).verify(fresh["requestState"], "tools/call", call)
    assert signed.round == 1  # signed with the first key
    refused = RequestStateCodec([OLD]).verify
    try:
        refused(fresh["requestState"], "tools/call", call)
    except Exception as exc:
        assert getattr(exc, "reason", None) == "tampered"
    else:
        raise AssertionError("a state signed with the old key after the rotation")


@pytest.mark.slow  # two workers, and rounds refused until the new Redis's epoch is 2.5 s old
async def test_workers_share_their_supervisor_key_and_it_is_not_in_redis(
    redis_server: RedisServer,
) -> None:
    server = HttpProcess("--workers", "2", "--serve", SHARED, "--redis-url", redis_server.url)
    try:
        server.wait_for_line(SERVING, 20)
        deadline = time.monotonic() + 20
        while server.stderr.count(SERVING) < 2:
            assert time.monotonic() < deadline, server.stderr
            await asyncio.sleep(0.05)
        crossed = False
        connector = aiohttp.TCPConnector(force_close=True)  # the kernel spreads connections
        async with aiohttp.ClientSession(connector=connector) as http:
            for attempt in range(60):
                text = await _round_trip(http, server.url, 100 + 2 * attempt)
                asked, answered = text.removeprefix("Rhea asked by ").split(", answered to ")
                if asked != answered:
                    crossed = True
                    break
        assert crossed, "no round crossed the two workers"
    finally:
        server.stop()
    said = [line for line in server.lines if "CODEX_MCP_REQUEST_STATE_KEYS" in line]
    assert len(said) == 1, server.stderr  # once, by the supervisor, not by each worker


async def _round_trip(http: aiohttp.ClientSession, url: str, request_id: int) -> Any:
    for _ in range(20):
        first = await post(http, url, request(request_id, "tools/call", name="ask_across"))
        retry = request(
            request_id + 1,
            "tools/call",
            name="ask_across",
            inputResponses=NAME,
            requestState=first["result"]["requestState"],
        )
        answer = await post(http, url, retry)
        if answer.get("error", {}).get("data", {}).get("reason") == "expired":
            # Issued within moments of the store's epoch (a Redis just started: 2.5 s at
            # most, specs/scale.md): refused, and started again, as a client does.
            await asyncio.sleep(0.25)
            continue
        assert "result" in answer, answer  # never "tampered": both workers hold the key
        return answer["result"]["content"][0]["text"]
    raise AssertionError(f"refused for 5 s: {answer}")
