"""Sessions on the primary Redis Sentinel names (`redis+sentinel://`): two replicas of ours
serve one session; the primary is SIGKILLed; the sentinels promote its replica, and the
same session is served again as soon as they have, on both replicas, never answered 404 or
500 in between, and a call in that window is refused with a retryable 503 that carries its
request id."""

from __future__ import annotations

import asyncio
import itertools
import time
from collections.abc import Iterator
from pathlib import Path

import aiohttp
import pytest
from http_helpers import call, open_session, text_of
from scale_setup import SERVERS, SHARED, HttpProcess, wait_ready
from topologies import SentinelGroup, backend_params


@pytest.fixture(params=backend_params("redis", "valkey"))
def sentinels(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[SentinelGroup]:
    binary = SERVERS[request.param]
    assert binary is not None
    group = SentinelGroup(tmp_path / "sentinel", binary)
    yield group
    group.stop()


def serve(url: str, count: int, *args: str, env: dict[str, str] | None = None) -> list[HttpProcess]:
    group = [
        HttpProcess("--serve", SHARED, "--redis-url", url, *args, env=env) for _ in range(count)
    ]
    for replica in group:
        wait_ready(replica)
    return group


@pytest.mark.slow
async def test_a_session_is_served_again_as_soon_as_the_replica_is_promoted(
    sentinels: SentinelGroup,
) -> None:
    a, _ = ours = serve(sentinels.url, 2)
    try:
        async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=10)) as http:
            session = await open_session(http, a.url)
            for replica in ours:  # both hold the session
                async with http.post(replica.url, json=call(1, "whoami", {}), headers=session) as r:
                    assert text_of(await r.json()) == str(replica.pid)
            old = sentinels.current()
            assert old is sentinels.primary
            killed = time.monotonic()
            old.kill()
            statuses: list[tuple[float, int]] = []
            promoted: float | None = None
            served_again: float | None = None
            ids = itertools.count(100)
            while served_again is None:
                assert time.monotonic() - killed < 60, statuses[-5:]
                if promoted is None and sentinels.primary_port() == sentinels.replica.port:
                    promoted = time.monotonic()
                for replica in ours:
                    request_id = next(ids)
                    body = call(request_id, "echo", {"message": f"m{request_id}"})
                    async with http.post(replica.url, json=body, headers=session) as r:
                        reply = await r.json()
                        statuses.append((time.monotonic() - killed, r.status))
                        if r.status == 503:
                            assert r.headers["Retry-After"] == "1"
                            assert reply["id"] == request_id, reply
                            assert "Redis" in reply["error"]["message"], reply
                        else:
                            assert r.status == 200, (r.status, reply)  # never 404, never 500
                            assert text_of(reply) == f"m{request_id}"
                if statuses[-1][1] == statuses[-2][1] == 200 and any(s == 503 for _, s in statuses):
                    served_again = time.monotonic()
                await asyncio.sleep(0.05)  # poll: the sentinels are electing
            assert promoted is not None, "served again before the sentinels promoted the replica"
            # Served again within moments of the promotion (each replica pings every 250 ms
            # while down; its pub/sub connection comes back on the new primary too).
            assert served_again - promoted < 5, (promoted - killed, served_again - killed)
            assert sentinels.current() is sentinels.replica
            # The same session, on both replicas, from now on.
            for replica in ours:
                async with http.post(replica.url, json=call(9, "whoami", {}), headers=session) as r:
                    assert r.status == 200 and text_of(await r.json()) == str(replica.pid)
        refused = [t for t, s in statuses if s == 503]
        print(
            f"killed at 0; first 503 at {refused[0]:.2f} s; promoted at "
            f"{promoted - killed:.2f} s; served again at {served_again - killed:.2f} s"
        )
    finally:
        for replica in ours:
            replica.stop()
