"""1,000 concurrent sessions through a round-robin nginx over three replicas sharing Redis:
every request of every session may land on any replica, and no answer, progress or log
message ever reaches another session."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import aiohttp
import pytest
from http_helpers import call, messages_of, next_event, open_session, text_of
from scale_setup import Replicas, round_robin

SESSIONS = 1000
SAME_ID = 7  # every session uses the same request id and progress token


@pytest.mark.slow
async def test_a_thousand_sessions_over_three_replicas_without_cross_talk(
    replicas: Replicas, nginx: Any
) -> None:
    group = replicas(3, "--log-level", "warning")
    url = nginx(round_robin(group))
    async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=150)) as http:
        gate = asyncio.Semaphore(150)

        async def opened() -> dict[str, str]:
            async with gate:
                return await open_session(http, url)

        sessions = await asyncio.wait_for(asyncio.gather(*(opened() for _ in range(SESSIONS))), 120)
        assert len({s["Mcp-Session-Id"] for s in sessions}) == SESSIONS
        listeners = list(range(5))  # these listen on their GET stream (another replica's)
        streams = {
            i: await http.get(url, headers={**sessions[i], "Accept": "text/event-stream"})
            for i in listeners
        }

        async def one(index: int) -> Any:
            session = sessions[index]
            async with gate:
                if index in streams:  # JSON-only: its logs go to its GET stream
                    body = call(SAME_ID, "emit", {"count": 2, "tag": f"g{index}"})
                    headers = {**session, "Accept": "application/json"}
                    async with http.post(url, json=body, headers=headers) as response:
                        assert response.status == 200
                    return [
                        json.loads(e["data"])["params"]["data"]
                        for e in await _events(streams[index], 2)
                    ]
                if index % 100 == 50:  # progress on the call's own SSE stream
                    body = call(
                        SAME_ID, "steps", {"count": 3, "tag": f"p{index}"}, {"progressToken": 1}
                    )
                    async with http.post(url, json=body, headers=session) as response:
                        return [
                            m.get("params", {}).get("message") or text_of(m)
                            for m in await messages_of(response)
                        ]
                body = call(SAME_ID, "echo", {"message": f"m-{index}"})
                async with http.post(url, json=body, headers=session) as response:
                    reply = await response.json()
                assert reply["id"] == SAME_ID
                return text_of(reply)

        results = await asyncio.wait_for(asyncio.gather(*(one(i) for i in range(SESSIONS))), 120)
        for stream in streams.values():
            stream.close()
        loads = []
        for replica in group:
            async with http.get(f"{replica.base}/readyz") as ready:
                loads.append((await ready.json())["sessions"])
    for index, got in enumerate(results):
        if index in streams:
            assert got == [f"g{index}-1", f"g{index}-2"], (index, got)
        elif index % 100 == 50:
            assert got[:3] == [f"p{index}:1", f"p{index}:2", f"p{index}:3"], (index, got)
            assert got[3] in {str(r.pid) for r in group}
        else:
            assert got == f"m-{index}", (index, got)
    # Round-robin spread the sessions' requests: each replica served a good share of them.
    assert all(load > SESSIONS / 3 for load in loads), loads


async def _events(stream: aiohttp.ClientResponse, count: int) -> list[dict[str, str]]:
    found: list[dict[str, str]] = []
    while len(found) < count:
        event = await next_event(stream, timeout=30)
        assert event is not None
        if event.get("data"):
            found.append(event)
    return found
