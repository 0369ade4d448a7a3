"""Exactly once across a Redis failover (Sentinel): 1,000 calls with the primary SIGKILLed
in the middle are each run once and answered once, or refused with a retryable 503 (and
then sent again, as a client does), never run twice; and a requestState claimed on the
old primary, whose claim the promoted replica never received, is refused when replayed."""

from __future__ import annotations

import asyncio
import base64
import collections
import itertools
import json
import os
import signal
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from codex_mcp.core.request_state import generate_key
from http_helpers import call, open_session, text_of
from support.polling import until
from test_request_state_keys import NAME
from test_sentinel import sentinels as sentinels
from test_sentinel import serve
from test_stateless_replicas import post, request
from topologies import SentinelGroup

CALLS = 1000
CALLERS = 8


@pytest.mark.slow
async def test_a_thousand_calls_across_a_failover_each_run_once(
    sentinels: SentinelGroup, tmp_path: Path
) -> None:
    runs = tmp_path / "runs"
    env = {**os.environ, "CODEX_MCP_TEST_RUNS": str(runs)}
    ours = serve(sentinels.url, 2, env=env)
    answered: collections.Counter[str] = collections.Counter()
    refused = 0
    other: list[Any] = []
    tags = iter(range(CALLS))
    ids = itertools.count(1)
    half = asyncio.Event()

    async def caller(http: aiohttp.ClientSession, session: dict[str, str], index: int) -> None:
        nonlocal refused
        for tag in tags:
            for attempt in range(400):  # bounded: 20 s of refusals at most
                replica = ours[(index + attempt) % 2]
                request_id = next(ids)
                body = call(request_id, "record", {"tag": str(tag)})
                async with http.post(replica.url, json=body, headers=session) as r:
                    reply = await r.json()
                if r.status == 200:
                    assert reply["id"] == request_id and text_of(reply) == str(tag), reply
                    answered[str(tag)] += 1
                    break
                if r.status == 503 and reply["id"] == request_id and r.headers["Retry-After"]:
                    refused += 1
                    await asyncio.sleep(0.05)  # poll: the sentinels are promoting
                    continue
                other.append((r.status, reply))
                return
            if sum(answered.values()) >= CALLS // 2:
                half.set()

    try:
        async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=15)) as http:
            sessions = [await open_session(http, ours[i % 2].url) for i in range(4)]
            callers = [
                asyncio.ensure_future(caller(http, sessions[i % 4], i)) for i in range(CALLERS)
            ]
            await asyncio.wait_for(half.wait(), 120)
            sentinels.current().kill()
            await asyncio.wait_for(asyncio.gather(*callers), 180)
    finally:
        for replica in ours:
            replica.stop()
    assert not other, other[:3]
    assert refused > 0, "no call met the failover"
    assert sorted(answered) == sorted(str(t) for t in range(CALLS))
    assert set(answered.values()) == {1}  # answered once each
    ran = collections.Counter(line.split()[0] for line in runs.read_text().splitlines())
    assert ran == answered, {t: n for t, n in ran.items() if n != 1}  # and run once each
    print(f"{CALLS} calls, {refused} refusals (503) during the failover, each run once")


@pytest.mark.slow
async def test_a_state_claimed_on_a_primary_that_died_unreplicated_is_refused(
    sentinels: SentinelGroup,
) -> None:
    """The hole WAIT cannot close: the replica is paused and its replication link cut (as
    a network fault would), so the claim of a requestState's nonce reaches only the primary,
    which acknowledges it and is then SIGKILLed. The promoted replica never heard of the
    claim; the state replayed there is refused all the same (issued before that Redis
    process held the nonces: reason "expired"). With a plain SET NX it was accepted."""
    keys = {**os.environ, "CODEX_MCP_REQUEST_STATE_KEYS": generate_key().hex()}
    a, b = ours = serve(sentinels.url, 2, env=keys)
    try:
        async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=15)) as http:
            first = await post(http, a.url, request(1, "tools/call", name="ask_across"))
            state = first["result"]["requestState"]
            body = state.partition(".")[0]
            nonce = json.loads(base64.urlsafe_b64decode(body + "=" * (-len(body) % 4)))["i"]
            retry = request(
                2, "tools/call", name="ask_across", inputResponses=NAME, requestState=state
            )
            replica = sentinels.replica.process
            assert replica is not None
            os.kill(replica.pid, signal.SIGSTOP)  # replication stops here: nothing more
            try:  # reaches the replica's socket, and what did is read on SIGCONT
                primary = sentinels.current()
                assert primary.cli("client", "kill", "type", "replica").strip() == "1"
                done = await post(http, a.url, retry)  # claimed on the primary alone
                assert "result" in done, done
                primary.kill()
            finally:
                os.kill(replica.pid, signal.SIGCONT)
            promoted = await until(
                lambda: sentinels.primary_port() == sentinels.replica.port and ready(http, b),
                60,
                "the replica promoted, and a replica of ours serving again",
            )
            assert promoted
            # The claim is lost: the promoted replica never received it.
            assert sentinels.replica.cli("exists", f"codex-mcp:nonce:{nonce}").strip() == "0"
            replayed = await post(http, b.url, {**retry, "id": 3})
            assert "error" in replayed, f"the replay was accepted: {replayed}"
            assert replayed["error"]["data"]["reason"] == "expired", replayed
            print("replayed after the failover:", replayed["error"]["message"])
    finally:
        for replica_of_ours in ours:
            replica_of_ours.stop()


async def ready(http: aiohttp.ClientSession, replica: Any) -> bool:
    async with http.get(f"{replica.base}/readyz") as response:
        return response.status == 200
