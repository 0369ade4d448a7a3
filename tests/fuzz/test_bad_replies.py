"""Malformed replies to the server's own requests, over real stdio and real HTTP.

The examples server's `test_elicitation` tool asks the client (`elicitation/create`, our
request id 1) and waits. We answer it badly: one bad reply may cost at most the call that
is waiting for it, never the reader, and a reply whose id is not exactly 1 resolves nothing.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import aiohttp
import orjson
import pytest
from support.processes import StdioServer

from .http_peer import messages_of, open_session, sse_messages

if TYPE_CHECKING:
    from conftest import LaunchHttp

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples/everything_server.py"
CAPABILITIES = {"elicitation": {}, "sampling": {}}
ASK = {"name": "test_elicitation", "arguments": {"message": "who?"}}
ACCEPT = {"action": "accept", "content": {"username": "ada", "email": "a@b.c"}}
DECLINE = {"action": "decline"}

BAD_CODES = [pytest.param(code, id=repr(code)) for code in ("abc", None, [], -32000)]
# A list or object id names nothing; true and 1.0 are not our request 1; 2 was never asked.
# ("1" is: a peer that stringified our id still correlates, as with the official SDKs.)
BAD_IDS = [pytest.param(i, id=repr(i)) for i in ([1], {"id": 1}, True, 1.0, 2)]


def reply(request_id: Any, *, result: Any = None, code: Any = None) -> dict[str, Any]:
    if code is not None or result is None:
        return {"jsonrpc": "2.0", "id": request_id, "error": {"code": code, "message": "no"}}
    return {"jsonrpc": "2.0", "id": request_id, "result": result}


def text_of(answer: dict[str, Any]) -> str:
    if "error" in answer:
        return str(answer["error"]["message"])
    return str(answer["result"]["content"][0]["text"])


def is_failure(answer: dict[str, Any]) -> bool:
    return "error" in answer or answer["result"].get("isError") is True


# -- stdio --------------------------------------------------------------------------------


@pytest.fixture
def asked() -> Iterator[StdioServer]:
    """A stdio server whose tool call "call" is waiting for our answer to its request 1."""
    peer = StdioServer("--serve", str(EXAMPLES))
    try:
        peer.call(
            0,
            "initialize",
            {
                "protocolVersion": "2025-06-18",
                "capabilities": CAPABILITIES,
                "clientInfo": {"name": "fuzz", "version": "1"},
            },
        )
        peer.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        peer.request("call", "tools/call", ASK)
        question = peer.read()
        assert question["method"] == "elicitation/create" and question["id"] == 1, question
        yield peer
    finally:
        peer.stop()


def write_with_ping(peer: StdioServer, message: Any) -> None:
    """The bad reply and a ping in one write: the ping must not be lost with it."""
    ping = {"jsonrpc": "2.0", "id": "after", "method": "ping"}
    peer.write(orjson.dumps(message) + b"\n" + orjson.dumps(ping) + b"\n")


def stderr_after_eof(peer: StdioServer) -> str:
    peer.close_stdin()
    assert peer.read_line(timeout=15) is None
    assert peer.process.wait(10) == 0
    assert peer.process.stderr is not None
    return peer.process.stderr.read().decode(errors="replace")


@pytest.mark.parametrize("code", BAD_CODES)
def test_stdio_an_error_reply_with_a_bad_code_fails_only_the_waiting_call(
    asked: StdioServer, code: Any
) -> None:
    write_with_ping(asked, reply(1, code=code))
    assert asked.read() == {"jsonrpc": "2.0", "id": "after", "result": {}}
    answer = asked.read(timeout=3)  # the tool gets a clear error, at once
    assert answer["id"] == "call" and is_failure(answer), answer
    asked.assert_alive()
    assert "Traceback" not in stderr_after_eof(asked)


@pytest.mark.parametrize("request_id", BAD_IDS)
def test_stdio_a_reply_with_another_id_resolves_nothing(
    asked: StdioServer, request_id: Any
) -> None:
    write_with_ping(asked, reply(request_id, result=DECLINE))
    assert asked.read() == {"jsonrpc": "2.0", "id": "after", "result": {}}
    asked.send(reply(1, result=ACCEPT))  # only now is request 1 answered
    answer = asked.read(timeout=5)
    assert answer["id"] == "call" and "action=accept" in text_of(answer), answer
    assert "Traceback" not in stderr_after_eof(asked)


# -- HTTP ---------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def examples_url(launch_http: LaunchHttp) -> str:
    return launch_http("--serve", str(EXAMPLES))


async def http_ask(http: aiohttp.ClientSession, url: str) -> tuple[dict[str, str], Any]:
    """Start the call; returns the session headers and its SSE answer, positioned just
    after the server's request 1."""
    session = await open_session(http, url, capabilities=CAPABILITIES)
    call = {"jsonrpc": "2.0", "id": "call", "method": "tools/call", "params": ASK}
    response = await http.post(url, json=call, headers=session)
    assert response.content_type == "text/event-stream"
    events = sse_messages(response)
    question = await anext(events)
    assert question["method"] == "elicitation/create" and question["id"] == 1, question
    return session, (response, events)


async def rest_of(answer: Any) -> list[Any]:
    response, events = answer
    try:
        return [message async for message in events]
    finally:
        response.close()


@pytest.mark.parametrize("code", BAD_CODES)
async def test_http_an_error_reply_with_a_bad_code_fails_only_the_waiting_call(
    examples_url: str, code: Any
) -> None:
    async with aiohttp.ClientSession() as http:
        session, answer = await http_ask(http, examples_url)
        async with http.post(examples_url, json=reply(1, code=code), headers=session) as posted:
            assert posted.status < 500, await posted.text()
        final = (await rest_of(answer))[-1]
        assert final["id"] == "call" and is_failure(final), final
        ping = {"jsonrpc": "2.0", "id": "after", "method": "ping"}
        async with http.post(examples_url, json=ping, headers=session) as response:
            assert await messages_of(response) == [{"jsonrpc": "2.0", "id": "after", "result": {}}]


@pytest.mark.parametrize("request_id", BAD_IDS)
async def test_http_a_reply_with_another_id_resolves_nothing(
    examples_url: str, request_id: Any
) -> None:
    async with aiohttp.ClientSession() as http:
        session, answer = await http_ask(http, examples_url)
        bad = reply(request_id, result=DECLINE)
        async with http.post(examples_url, json=bad, headers=session) as posted:
            assert posted.status < 500, await posted.text()
        async with http.post(examples_url, json=reply(1, result=ACCEPT), headers=session) as ok:
            assert ok.status == 202
        final = (await rest_of(answer))[-1]
        assert final["id"] == "call" and "action=accept" in text_of(final), final
