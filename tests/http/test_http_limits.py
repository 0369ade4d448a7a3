"""Work cannot outgrow its caps: calls in flight per session and in all, and throwaway
sessions (single-event SSE, stateless POSTs) against the session cap. The excess gets
429 (a session's own calls) or 503 (the server's), with Retry-After and a JSON-RPC error."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import aiohttp
from aiohttp.test_utils import TestClient
from gate import Gate
from http_helpers import JSON, call, init, messages_of, notification, open_session
from http_process import MakeClient

BLOCK = "block"


def single_event(request_id: int, name: str = BLOCK) -> dict[str, str]:
    return {"request": json.dumps(call(request_id, name, {}))}


async def refused(response: aiohttp.ClientResponse, status: int, request_id: Any) -> str:
    """The refusal's message, after checking its shape."""
    assert response.status == status, await response.text()
    assert response.headers["Retry-After"] == "1"
    body = await response.json()
    assert body["id"] == request_id and body["error"]["code"] == -32000
    return str(body["error"]["message"])


async def stats(client: TestClient[Any, Any]) -> dict[str, Any]:
    response = await client.get("/readyz")
    result: dict[str, Any] = await response.json()
    return result


async def test_single_event_calls_count_against_the_session_cap(make_client: MakeClient) -> None:
    gate = Gate()
    client = await make_client(gate.server().core, max_sessions=3)
    running = await gate.hold(*(client.get("/mcp/sse", params=single_event(n)) for n in range(3)))
    extra = await asyncio.wait_for(client.get("/mcp/sse", params=single_event(9)), 10)
    assert "Too many sessions" in await refused(extra, 503, 9)
    assert (await stats(client))["throwaway_sessions"] == 3
    initialize = await client.post("/mcp", json=init(), headers=JSON)
    assert "Too many sessions" in await refused(initialize, 503, 1)
    gate.open.set()
    for task in running:
        response = await task
        assert [m["result"]["content"][0]["text"] for m in await messages_of(response)] == [
            "released"
        ]
    assert (await stats(client))["throwaway_sessions"] == 0
    assert (await client.post("/mcp", json=init(), headers=JSON)).status == 200


async def test_stateless_posts_count_against_the_session_cap(make_client: MakeClient) -> None:
    gate = Gate()
    client = await make_client(gate.server().core, max_sessions=2, stateless=True)
    running = await gate.hold(
        *(client.post("/mcp", json=call(n, BLOCK, {}), headers=JSON) for n in range(2))
    )
    extra = await client.post("/mcp", json=call(5, "echo", {"message": "x"}), headers=JSON)
    await refused(extra, 503, 5)
    gate.open.set()
    for task in running:
        assert (await task).status == 200
    extra = await client.post("/mcp", json=call(6, "echo", {"message": "x"}), headers=JSON)
    assert extra.status == 200


async def test_a_session_past_its_share_of_calls_gets_429(make_client: MakeClient) -> None:
    gate = Gate()
    client = await make_client(gate.server().core, max_session_inflight=2)
    busy = await open_session(client)
    running = await gate.hold(
        *(client.post("/mcp", json=call(n, BLOCK, {}), headers=busy) for n in range(2))
    )
    extra = await client.post("/mcp", json=call(3, "echo", {"message": "x"}), headers=busy)
    assert "in this session" in await refused(extra, 429, 3)
    # Through single-event SSE in the same session as well.
    extra = await client.get(
        "/mcp/sse",
        params=single_event(4, "echo"),
        headers={"Mcp-Session-Id": busy["Mcp-Session-Id"]},
    )
    await refused(extra, 429, 4)
    # Another session is not held back by this one.
    other = await open_session(client)
    response = await client.post("/mcp", json=call(3, "echo", {"message": "x"}), headers=other)
    assert response.status == 200
    gate.open.set()
    for task in running:
        assert (await task).status == 200
    response = await client.post("/mcp", json=call(3, "echo", {"message": "y"}), headers=busy)
    assert response.status == 200


async def test_the_server_past_its_calls_in_flight_gets_503(make_client: MakeClient) -> None:
    gate = Gate()
    client = await make_client(gate.server().core, max_inflight=2)
    sessions = [await open_session(client) for _ in range(2)]
    running = await gate.hold(
        *(client.post("/mcp", json=call(7, BLOCK, {}), headers=session) for session in sessions)
    )
    assert (await stats(client))["calls_in_flight"] == 2
    extra = await client.post("/mcp", json=call(8, "echo", {"message": "x"}), headers=sessions[0])
    assert "on this server" in await refused(extra, 503, 8)
    # A call that has finished no longer counts.
    gate.open.set()
    for task in running:
        assert (await task).status == 200
    assert (await stats(client))["calls_in_flight"] == 0


async def test_calls_that_end_without_an_answer_stop_counting(make_client: MakeClient) -> None:
    gate = Gate()
    client = await make_client(gate.server().core, max_inflight=2)
    cancelled, deleted = [await open_session(client) for _ in range(2)]
    running = await gate.hold(
        *(
            client.post("/mcp", json=call(1, BLOCK, {}), headers=session)
            for session in (cancelled, deleted)
        )
    )
    cancel = notification("notifications/cancelled", {"requestId": 1, "reason": "test"})
    assert (await client.post("/mcp", json=cancel, headers=cancelled)).status == 202
    assert (await client.delete("/mcp", headers=deleted)).status == 200
    for task in running:
        await task
    assert (await stats(client))["calls_in_flight"] == 0
    session = await open_session(client)
    response = await client.post("/mcp", json=call(2, "echo", {"message": "x"}), headers=session)
    assert response.status == 200


async def test_a_batch_that_does_not_fit_is_refused_whole(make_client: MakeClient) -> None:
    client = await make_client(max_session_inflight=2)
    session = await open_session(client, version="2025-03-26")
    batch = [call(n, "echo", {"message": str(n)}) for n in range(3)]
    response = await client.post("/mcp", json=batch, headers=session)
    assert "in this session" in await refused(response, 429, None)
    response = await client.post("/mcp", json=batch[:2], headers=session)
    assert response.status == 200 and len(await response.json()) == 2


async def test_legacy_sse_sessions_are_held_to_their_share(make_client: MakeClient) -> None:
    gate = Gate()
    client = await make_client(gate.server().core, max_session_inflight=1)
    stream = await client.get("/sse", headers={"Accept": "text/event-stream"})
    endpoint = ""
    async for line in stream.content:
        if line.startswith(b"data: "):
            endpoint = line[6:].decode().strip()
            break
    post = await client.post(endpoint, json=call(1, BLOCK, {}))
    assert post.status == 202
    await gate.until_started(1)
    await refused(await client.post(endpoint, json=call(2, "echo", {"message": "x"})), 429, None)
    gate.open.set()
    stream.close()
