"""Two replicas under a steady, bounded load of calls and GET streams while Redis is killed
and restarted empty, then one replica is SIGKILLed. Every call gets exactly one answer (a
result, or a clear error: 503 naming Redis while it is down, a refused connection from the
dead replica); no session is lost while a replica that held it lives; no GET stream is left
hanging (each ends on a fault and, reopened, gets what is sent afterwards)."""

from __future__ import annotations

import asyncio
import itertools
import json
import os
import signal
from dataclasses import dataclass, field

import aiohttp
import pytest
from http_helpers import SSE_ONLY, call, next_event, open_session, text_of
from http_process import HttpProcess
from scale_setup import RedisServer, Replicas
from support.polling import until

SESSIONS = 6  # each used on both replicas, so both hold every one of them
CALLERS = 4
#: The load is bounded in count as well as in time, with room for every phase: a quiet machine
#: answers thousands of calls before the last phase, which must still see 100 more.
MAX_CALLS = 20000
STREAMS = 2  # sessions that also hold a GET stream
JSON_ONLY = {"Accept": "application/json"}


@dataclass
class Load:
    sessions: list[dict[str, str]]
    replicas: list[HttpProcess]
    dead: set[int] = field(default_factory=set)  # pids SIGKILLed by the test
    #: When Redis was killed, and when every replica said it was ready again (loop time).
    outage: list[float] = field(default_factory=list)
    stopping: asyncio.Event = field(default_factory=asyncio.Event)
    answers: dict[int, list[str]] = field(default_factory=dict)  # request id -> outcomes
    lost_sessions: list[str] = field(default_factory=list)
    ids: itertools.count[int] = field(default_factory=lambda: itertools.count(1000))


async def caller(http: aiohttp.ClientSession, load: Load, index: int) -> None:
    for turn in itertools.count():
        if load.stopping.is_set() or len(load.answers) >= MAX_CALLS:
            return
        session = load.sessions[(index + turn) % len(load.sessions)]
        replica = load.replicas[(index + turn) % len(load.replicas)]
        request_id = next(load.ids)
        outcomes = load.answers.setdefault(request_id, [])
        body = call(request_id, "echo", {"message": f"m{request_id}"})
        started = asyncio.get_running_loop().time()
        try:
            async with http.post(replica.url, json=body, headers=session) as response:
                reply = await response.json()
                if response.status == 200:
                    assert reply["id"] == request_id and text_of(reply) == f"m{request_id}"
                    outcomes.append("result")
                elif response.status == 503 and during_outage(load, started):
                    assert "Redis" in reply["error"]["message"], reply
                    outcomes.append("busy")
                    await asyncio.sleep(0.01)  # poll: Redis is coming back
                else:
                    if response.status == 404 and replica.pid not in load.dead:
                        load.lost_sessions.append(f"{response.status} {reply} on {replica.pid}")
                    phase = "a dead" if load.dead else "redis back"
                    outcomes.append(f"status {response.status} on {replica.pid} ({phase}): {reply}")
        except (TimeoutError, aiohttp.ClientConnectionError) as exc:
            # Only the replica the test killed may fail to answer at all.
            assert replica.pid in load.dead, f"no answer from a live replica: {exc!r}"
            outcomes.append("refused")
            await asyncio.sleep(0.01)  # poll: the dead replica stays dead


def during_outage(load: Load, started: float) -> bool:
    """A 503 is right for a request answered after Redis was killed that started before
    every replica said it was back."""
    return bool(load.outage) and (len(load.outage) == 1 or started < load.outage[1])


@dataclass
class Reader:
    session: dict[str, str]
    home: HttpProcess
    events: list[str] = field(default_factory=list)
    last_id: str | None = None
    opened: int = 0


async def reader(http: aiohttp.ClientSession, load: Load, stream: Reader) -> None:
    """Holds the session's GET stream; reopens it (resuming) wherever a live replica is."""
    while not load.stopping.is_set():
        replica = stream.home
        if replica.pid in load.dead:
            replica = next(r for r in load.replicas if r.pid not in load.dead)
        headers = {**stream.session, **SSE_ONLY}
        if stream.last_id is not None:
            headers["Last-Event-ID"] = stream.last_id
        try:
            async with http.get(replica.url, headers=headers) as response:
                if response.status != 200:
                    await asyncio.sleep(0.1)  # poll: Redis is coming back
                    continue
                stream.opened += 1
                while (event := await next_event(response, timeout=60)) is not None:
                    if event.get("id"):
                        stream.last_id = event["id"]
                    if event.get("data"):
                        stream.events.append(json.loads(event["data"])["params"]["data"])
        except (aiohttp.ClientConnectionError, aiohttp.ClientPayloadError):
            await asyncio.sleep(0.1)  # poll: its replica died; the next try goes elsewhere


async def readiness(http: aiohttp.ClientSession, replicas: list[HttpProcess]) -> list[int]:
    found = []
    for replica in replicas:
        async with http.get(f"{replica.base}/readyz") as response:
            found.append(response.status)
    return found


@pytest.mark.slow
async def test_calls_and_streams_through_a_redis_crash_and_a_killed_replica(
    replicas: Replicas, redis_server: RedisServer
) -> None:
    a, b = replicas(2)
    timeout = aiohttp.ClientTimeout(total=None, sock_connect=5)
    async with aiohttp.ClientSession(timeout=timeout) as http:
        sessions = [await open_session(http, (a, b)[i % 2].url) for i in range(SESSIONS)]
        load = Load(sessions, [a, b])
        streams = [Reader(sessions[i], (a, b)[i % 2]) for i in range(STREAMS)]
        tasks = [asyncio.ensure_future(caller(http, load, i)) for i in range(CALLERS)]
        tasks += [asyncio.ensure_future(reader(http, load, s)) for s in streams]
        try:
            await until(lambda: answered(load, 100))  # warm: both replicas hold every session
            await until(lambda: opened(streams))

            load.outage.append(asyncio.get_running_loop().time())
            redis_server.kill()
            await until(lambda: statuses(http, [a, b], 503))
            redis_server.start()  # empty
            await until(lambda: statuses(http, [a, b], 200))
            load.outage.append(asyncio.get_running_loop().time())
            seen = len(load.answers)
            await until(lambda: answered(load, seen + 100))

            os.kill(a.pid, signal.SIGKILL)
            load.dead.add(a.pid)
            a.process.wait(10)
            seen = len(load.answers)
            await until(lambda: answered(load, seen + 100))

            # Every stream, reopened where it could be, gets what is sent after the faults.
            for index, stream in enumerate(streams):
                tag = {"count": 1, "tag": f"after-{index}"}
                reply = call(9000 + index, "emit", tag)
                async with http.post(
                    b.url, json=reply, headers={**stream.session, **JSON_ONLY}
                ) as response:
                    said = [ln[:300] for ln in b.lines if "codex_mcp.scale" in ln][-4:]
                    assert response.status == 200, (response.status, await response.text(), said)
            await until(lambda: all_got(streams), 20, streams)
        finally:
            load.stopping.set()
            for task in tasks:
                task.cancel()
            results = await asyncio.gather(*tasks, return_exceptions=True)
        failures = [r for r in results if not isinstance(r, asyncio.CancelledError | None)]
        assert not failures, failures

        # No session lost while a replica that held it lives: every one goes on on b.
        for index, session in enumerate(sessions):
            body = call(8000 + index, "echo", {"message": "still here"})
            async with http.post(b.url, json=body, headers=session) as response:
                assert response.status == 200, await response.text()
    assert not load.lost_sessions, load.lost_sessions[:3]
    twice = {rid: o for rid, o in load.answers.items() if len(o) > 1}
    assert not twice, twice  # one answer per call
    kinds = {o[0] for o in load.answers.values() if o}
    assert {"result", "busy", "refused"} <= kinds, kinds  # every fault met the load
    assert len(load.answers) <= MAX_CALLS + CALLERS
    wrong = [o[0] for o in load.answers.values() if o and o[0].startswith("status")]
    assert not wrong, wrong[:3]
    assert all(s.opened >= 2 for s in streams)  # each ended on a fault and was reopened
    unanswered = [rid for rid, o in load.answers.items() if not o]
    assert len(unanswered) <= CALLERS  # only those in flight when the load was stopped


async def answered(load: Load, count: int) -> bool:
    return sum(1 for o in load.answers.values() if o) >= count


async def opened(streams: list[Reader]) -> bool:
    return all(s.opened for s in streams)


async def statuses(http: aiohttp.ClientSession, replicas: list[HttpProcess], status: int) -> bool:
    return await readiness(http, replicas) == [status] * len(replicas)


async def all_got(streams: list[Reader]) -> bool:
    return all(f"after-{i}-1" in s.events for i, s in enumerate(streams))
