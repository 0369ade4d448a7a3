"""A session deleted while one of its calls runs (issue 28): every request still gets exactly
one answer. The POST whose answer had turned into an SSE stream ends it with a JSON-RPC error
for its id (-32001, the session is gone: initialize a new one) instead of closing it empty;
a POST still waiting for a JSON answer gets the same error, with its id, as a 404. Against a
real `codex-mcp-http` subprocess, with the session deleted from another connection."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable

import aiohttp
from codex_mcp.transports.http.errors import SESSION_NOT_FOUND
from http_helpers import call, messages_of, next_event, open_session
from http_process import SERVERS, HttpProcess

Start = Callable[..., HttpProcess]

INTERACTIVE = str(SERVERS / "interactive.py")
JSON_ONLY = {"Content-Type": "application/json", "Accept": "application/json"}


async def test_a_delete_ends_a_streaming_post_with_an_error_for_its_request(
    http_process: Start,
) -> None:
    server: HttpProcess = http_process("--serve", INTERACTIVE)
    async with aiohttp.ClientSession() as http, aiohttp.ClientSession() as other:
        session = await open_session(http, server.url)
        hanging = call(7, "hang", {}, meta={"progressToken": "p7"})
        async with http.post(server.url, json=hanging, headers=session) as streaming:
            assert streaming.headers["Content-Type"].startswith("text/event-stream")
            first = await next_event(streaming, timeout=10)  # the call's "started" progress
            assert first is not None and json.loads(first["data"])["method"] == (
                "notifications/progress"
            )
            async with other.delete(server.url, headers=session) as deleted:
                assert deleted.status == 200
            rest = await messages_of(streaming, timeout=10)  # to the end of the stream
    assert rest, "the stream ended with no answer for request 7"
    final = rest[-1]
    assert final["id"] == 7, final
    assert final["error"]["code"] == SESSION_NOT_FOUND, final
    assert "session ended" in final["error"]["message"].lower(), final
    assert all("id" not in m or m is final for m in rest), rest  # one answer, no other


async def test_a_delete_answers_a_post_waiting_for_json_with_its_request_id(
    http_process: Start,
) -> None:
    server: HttpProcess = http_process("--serve", INTERACTIVE)
    async with aiohttp.ClientSession() as http, aiohttp.ClientSession() as other:
        session = await open_session(http, server.url)
        headers = {**session, **JSON_ONLY}
        waiting = asyncio.create_task(
            http.post(server.url, json=call(8, "slow", {"seconds": 30}), headers=headers)
        )
        await asyncio.to_thread(server.wait_for_line, "slow call started", 10)
        async with other.delete(server.url, headers=session) as deleted:
            assert deleted.status == 200
        response = await asyncio.wait_for(waiting, 10)
        body = await response.json(content_type=None)
    assert response.status == 404, body
    assert body["id"] == 8, body
    assert body["error"]["code"] == SESSION_NOT_FOUND, body


async def test_answers_to_calls_of_other_sessions_are_untouched_by_a_delete(
    http_process: Start,
) -> None:
    """Deleting one session answers its own calls only: a call of another session on the
    same server runs on and answers with its result."""
    server: HttpProcess = http_process("--serve", INTERACTIVE)
    async with aiohttp.ClientSession() as http:
        doomed = await open_session(http, server.url)
        survivor = await open_session(http, server.url)
        survivor_call = asyncio.create_task(
            http.post(server.url, json=call(9, "slow", {"seconds": 1}), headers=survivor)
        )
        await asyncio.to_thread(server.wait_for_line, "slow call started", 10)
        async with http.delete(server.url, headers=doomed) as deleted:
            assert deleted.status == 200
        response = await asyncio.wait_for(survivor_call, 15)
        reply = await response.json()
    assert reply["id"] == 9 and reply["result"]["content"][0]["text"] == "slept 1 s", reply


async def test_a_delete_ends_a_resumed_request_stream_with_an_error_for_its_request(
    http_process: Start,
) -> None:
    """The client left the POST's stream and resumed it on GET with Last-Event-ID: the
    resumed stream carries the call's answer, so it too ends with the error for its id."""
    server: HttpProcess = http_process("--serve", INTERACTIVE)
    async with aiohttp.ClientSession() as http, aiohttp.ClientSession() as other:
        session = await open_session(http, server.url)
        hanging = call(5, "hang", {}, meta={"progressToken": "p5"})
        async with http.post(server.url, json=hanging, headers=session) as streaming:
            first = await next_event(streaming, timeout=10)
            assert first is not None and first.get("id"), first
        # The POST's connection is gone (the call runs on: --on-hangup keep).
        resume = {**session, "Accept": "text/event-stream", "Last-Event-ID": first["id"]}
        async with other.get(server.url, headers=resume) as resumed:
            assert resumed.status == 200, await resumed.text()
            async with http.delete(server.url, headers=session) as deleted:
                assert deleted.status == 200
            rest = await messages_of(resumed, timeout=10)
    assert rest, "the resumed stream ended with no answer for request 5"
    assert rest[-1]["id"] == 5 and rest[-1]["error"]["code"] == SESSION_NOT_FOUND, rest
