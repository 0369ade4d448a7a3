"""What a session keeps of a request's SSE stream for `Last-Event-ID` (issue 39): every
event until the client has read the stream to its end, then nothing. Read to its end means
the client's next request came on the connection that carried the end (an HTTP/1.1 client
reuses a connection only once it has read the response on it); a connection closed after
the end, a request pipelined before it, or a stream cut before its end leave the events
resumable (specs/http.md, "Resumability").

Over a real `codex-mcp-http` (the rounds server's tools). A forgotten stream is told from a
kept one by what resuming it gives: a kept one replays its missed events and ends; for an
id of a stream the session no longer knows, the 2025-11-25 server opens the standalone
stream, whose first event is its priming event (`0_<n>`).
"""

from __future__ import annotations

import asyncio
import json
import secrets
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import aiohttp
import pytest
from codex_mcp.transports.backpressure import EVENT_OVERHEAD
from codex_mcp.transports.http.streams import StreamSet
from gateway.gateway_helpers import launch_http, stop
from support.raw_session import open_session

from memory.calls import tool_call

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="a POSIX server process")

SERVER = Path(__file__).parent / "servers" / "rounds_server.py"
VERSION = "2025-11-25"  # its GET stream starts with a priming event


@pytest.fixture(scope="module")
def url() -> Any:
    process, url = launch_http("--serve", str(SERVER))
    yield url
    stop(process)


@pytest.fixture
async def one_connection() -> AsyncIterator[aiohttp.ClientSession]:
    """A client whose requests all go over one kept-alive connection."""
    async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=1)) as http:
        yield http


async def next_event(response: aiohttp.ClientResponse) -> dict[str, Any]:
    """The next SSE event with data: its id and its message."""
    event_id = ""
    while line := await response.content.readline():
        if line.startswith(b"id: "):
            event_id = line[4:].strip().decode()
        elif line.startswith(b"data: ") and line[6:].strip():
            return {"id": event_id, "message": json.loads(line[6:])}
    raise AssertionError("the stream ended before its next event")


async def events(response: aiohttp.ClientResponse) -> list[dict[str, Any]]:
    """Every event of a stream that ends, priming events left out."""
    found = []
    for block in (await response.read()).split(b"\n\n"):
        fields = dict(line.split(b": ", 1) for line in block.split(b"\n") if b": " in line)
        if fields.get(b"data", b"").strip():
            found.append({"id": fields[b"id"].decode(), "message": json.loads(fields[b"data"])})
    return found


async def streamed_call(
    http: aiohttp.ClientSession, url: str, session: dict[str, str], n: int
) -> list[dict[str, Any]]:
    """A call whose answer is an SSE stream, read to its end."""
    async with http.post(url, json=tool_call(n, "streamed", n=n), headers=session) as response:
        assert response.headers["Content-Type"].startswith("text/event-stream")
        read = await events(response)
    assert read[-1]["message"]["id"] == n and "result" in read[-1]["message"], read[-1]
    return read


async def resume(http: aiohttp.ClientSession, url: str, session: dict[str, str], last: str) -> Any:
    headers = {**session, "Accept": "text/event-stream", "Last-Event-ID": last}
    return http.get(url, headers=headers)


async def assert_forgotten(
    http: aiohttp.ClientSession, url: str, session: dict[str, str], last: str
) -> None:
    """Resuming from `last` opens the standalone stream: nothing of its stream is left."""
    async with await resume(http, url, session, last) as response:
        assert response.status == 200
        first = await asyncio.wait_for(response.content.readuntil(b"\n\n"), 10)
        assert first.startswith(b"id: 0_") and b"retry: " in first, first


async def assert_kept(
    http: aiohttp.ClientSession, url: str, session: dict[str, str], last: str, n: int
) -> None:
    """Resuming from `last` replays the rest of its stream, the answer last, and ends."""
    async with await resume(http, url, session, last) as response:
        assert response.status == 200
        rest = await asyncio.wait_for(events(response), 10)
    assert rest and rest[-1]["message"]["id"] == n and "result" in rest[-1]["message"], rest


async def test_a_stream_read_to_its_end_is_forgotten_once_its_connection_is_reused(
    url: str, one_connection: aiohttp.ClientSession
) -> None:
    session = await open_session(one_connection, url, VERSION)
    read = await streamed_call(one_connection, url, session, 1)
    # The resume itself is the next request on that connection: the stream is forgotten.
    await assert_forgotten(one_connection, url, session, read[0]["id"])


async def test_a_stream_whose_connection_closed_after_its_end_stays_resumable(url: str) -> None:
    """The client may have closed it with the end unread in its buffers: kept."""
    async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(force_close=True)) as http:
        session = await open_session(http, url, VERSION)
        read = await streamed_call(http, url, session, 1)
        await assert_kept(http, url, session, read[0]["id"], 1)


async def test_a_cut_stream_is_kept_until_resumed_then_forgotten(
    url: str, one_connection: aiohttp.ClientSession
) -> None:
    session = await open_session(one_connection, url, VERSION)
    token = secrets.token_hex(8)
    async with one_connection.post(
        url, json=tool_call(2, "waits", token=token), headers=session
    ) as call:
        progress = await next_event(call)
        assert progress["message"]["method"] == "notifications/progress"
        call.close()  # before its end: the call waits for the release below
    release = tool_call(3, "release", token=token)
    async with one_connection.post(url, json=release, headers=session) as response:
        assert (await response.json())["result"]["structuredContent"] == {"result": True}
    await assert_kept(one_connection, url, session, progress["id"], 2)
    # That resumption was read to its end, and the connection is used again: forgotten.
    await assert_forgotten(one_connection, url, session, progress["id"])


async def test_a_request_pipelined_behind_a_stream_does_not_count_as_its_reading(
    url: str, one_connection: aiohttp.ClientSession
) -> None:
    """A pipelining client sends its next request before it reads the response: the stream
    it has not read yet stays resumable."""
    session = await open_session(one_connection, url, VERSION)
    split = urlsplit(url)
    head = "".join(f"{name}: {value}\r\n" for name, value in session.items())
    body = json.dumps(tool_call(4, "streamed", n=4)).encode()
    request = (
        f"POST {split.path} HTTP/1.1\r\nHost: {split.netloc}\r\n{head}"
        f"Content-Length: {len(body)}\r\n\r\n"
    ).encode() + body
    ping = json.dumps({"jsonrpc": "2.0", "id": 5, "method": "ping"}).encode()
    second = (
        f"POST {split.path} HTTP/1.1\r\nHost: {split.netloc}\r\n{head}"
        f"Content-Length: {len(ping)}\r\nConnection: close\r\n\r\n"
    ).encode() + ping
    reader, writer = await asyncio.open_connection(split.hostname, split.port)
    try:
        writer.write(request + second)  # both at once, before reading anything
        await writer.drain()
        answered = await asyncio.wait_for(reader.read(), 10)  # both answers, then the close
    finally:
        writer.close()
    assert b'"id":4,"result"' in answered and b'"id":5,"result"' in answered, answered
    first_id = answered.split(b"id: ", 1)[1].split(b"\n", 1)[0].decode()
    async with aiohttp.ClientSession() as http:
        await assert_kept(http, url, session, first_id, 4)


async def test_a_cancelled_stream_read_to_its_end_is_forgotten(
    url: str, one_connection: aiohttp.ClientSession
) -> None:
    session = await open_session(one_connection, url, VERSION)
    async with aiohttp.ClientSession() as side:  # the cancellation goes beside the call
        waiting = tool_call(6, "waits", token=secrets.token_hex(8))
        async with one_connection.post(url, json=waiting, headers=session) as call:
            progress = await next_event(call)
            cancel = {
                "jsonrpc": "2.0",
                "method": "notifications/cancelled",
                "params": {"requestId": 6},
            }
            async with side.post(url, json=cancel, headers=session) as response:
                assert response.status == 202
            assert await events(call) == []  # no answer to a cancelled request
    await assert_forgotten(one_connection, url, session, progress["id"])


def test_forgetting_a_stream_keeps_the_one_beside_it_and_frees_its_bytes() -> None:
    """Two calls of a session stream at once; the first is read to its end. Its events go,
    the other's stay in order, and the room they took counts for newer events."""
    event = 1000 + EVENT_OVERHEAD
    streams = StreamSet(256, send_buffer_bytes=4 * event)  # room for four such events
    first, beside = streams.open(sse=True), streams.open(sse=True)
    first.replayable = beside.replayable = True
    for n in range(3):
        streams.push(first, b"%d" % n * 1000, final=n == 2)
        if n == 0:
            streams.push(beside, b"b" * 1000)
    streams.finish(first)
    streams.forget(first)
    assert streams.resume(first.key, 0) is None
    streams.push(beside, b"c" * 1000)
    streams.push(beside, b"d" * 1000)
    resumed = streams.resume(beside.key, 0)
    assert resumed is not None
    assert [data[:1] for _, data in resumed[1]] == [b"b", b"c", b"d"]  # none pushed out
