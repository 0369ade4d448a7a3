"""`--post-stream header`: seed 004's streaming, in-process on 127.0.0.1.

Seed 004's recipes: GET SSE plus JSON POST (the default: the POST answers one JSON body,
whatever its Accept says, and the call's notifications arrive on the GET stream), or
SSE on the POST with `X-MCP-POST-STREAM: 1`. Either way a message travels on one stream
only, so a client following a recipe never sees one twice."""

from __future__ import annotations

import json
from typing import Any

import aiohttp
from http_helpers import SSE_ONLY, call, messages_of, next_event, open_session, text_of
from http_process import MakeClient


def progress(request_id: int) -> dict[str, Any]:
    return call(request_id, "progress", {"steps": 2, "tag": "g"}, {"progressToken": request_id})


#: What curl sends when told nothing (seed 004's examples): it admits SSE too.
CURL = {"Accept": "*/*"}


async def get_stream_messages(stream: aiohttp.ClientResponse, count: int) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = []
    while len(found) < count:
        event = await next_event(stream)
        assert event is not None, found
        if event.get("data"):
            found.append(json.loads(event["data"]))
    return found


async def test_with_a_get_stream_the_post_answers_json_and_notifications_go_to_get(
    make_client: MakeClient,
) -> None:
    client = await make_client(post_stream="header")
    session = await open_session(client)
    stream = await client.get("/mcp", headers={**session, **SSE_ONLY})
    # `Accept: */*`, then the session's `application/json, text/event-stream`
    for request_id, accept in ((2, CURL), (3, {})):
        response = await client.post(
            "/mcp", json=progress(request_id), headers={**session, **accept}
        )
        assert response.content_type == "application/json"
        assert text_of(await response.json()) == "done g"
        seen = await get_stream_messages(stream, 4)
        assert [m["method"] for m in seen] == [
            "notifications/progress",
            "notifications/message",
        ] * 2
        assert all("id" not in m for m in seen)  # the answer is not on the GET stream too
    stream.close()


async def test_x_mcp_post_stream_puts_everything_on_the_post_and_nothing_on_get(
    make_client: MakeClient,
) -> None:
    client = await make_client(post_stream="header")
    session = await open_session(client)
    stream = await client.get("/mcp", headers={**session, **SSE_ONLY})
    response = await client.post(
        "/mcp", json=progress(2), headers={**session, **CURL, "X-MCP-POST-STREAM": "1"}
    )
    assert response.content_type == "text/event-stream"
    events = await messages_of(response)
    assert [e.get("method") for e in events] == [
        "notifications/progress",
        "notifications/message",
    ] * 2 + [None]
    assert text_of(events[-1]) == "done g"
    # The GET stream got none of it: the next thing on it is what we send now.
    echo = await client.post(
        "/mcp", json=call(9, "progress", {"steps": 1, "tag": "after"}), headers=session
    )
    assert text_of(await echo.json()) == "done after"
    [after] = await get_stream_messages(stream, 1)
    assert after["params"]["data"] == "after:log1"
    stream.close()


async def test_without_a_get_stream_a_streaming_call_still_upgrades(
    make_client: MakeClient,
) -> None:
    client = await make_client(post_stream="header")
    session = await open_session(client)
    response = await client.post("/mcp", json=progress(2), headers={**session, **CURL})
    assert response.content_type == "text/event-stream"  # no one reads GET: not lost there
    assert [e.get("method") for e in await messages_of(response)][-1] is None


async def test_the_default_still_upgrades_while_a_get_stream_is_open(
    make_client: MakeClient,
) -> None:
    client = await make_client()
    session = await open_session(client)
    stream = await client.get("/mcp", headers={**session, **SSE_ONLY})
    response = await client.post("/mcp", json=progress(2), headers=session)
    assert response.content_type == "text/event-stream"
    assert len(await messages_of(response)) == 5
    stream.close()
