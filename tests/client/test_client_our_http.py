"""Our client against our own HTTP server (Streamable HTTP and legacy SSE), as a subprocess."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from codex_mcp.client import Client
from codex_mcp.client.transports.streamable_http import StreamableHttpTransport
from codex_mcp.core.peer import Inbound
from support.processes import HttpProcess

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples/everything_server.py"


@pytest.fixture(scope="module")
def our_http() -> Iterator[str]:
    server = HttpProcess("--serve", str(EXAMPLES))
    yield server.base
    server.stop()


async def test_streamable_http_calls_and_progress(our_http: str) -> None:
    progress: list[float] = []
    async with Client.http(f"{our_http}/mcp", server_name="ours") as client:
        tools = await client.list_tools(qualify=True)
        names = {tool.name for tool in tools}
        assert "test_simple_text" in names
        assert any(t.qualified_name == "mcp__ours__test_simple_text" for t in tools)
        result = await client.call_tool("test_simple_text", {})
        assert result.text == "This is a simple text response for testing."
        await client.call_tool(
            "test_tool_with_progress", {}, on_progress=lambda p: progress.append(p["progress"])
        )
        added = await client.call_tool("add", {"a": 1, "b": 2})
        assert added.structured_content == {"result": 3}
    assert progress == [0, 50, 100]


async def test_legacy_sse_transport(our_http: str) -> None:
    async with Client.sse(f"{our_http}/sse") as client:
        result = await client.call_tool("test_simple_text", {})
        assert result.text == "This is a simple text response for testing."


async def test_session_ended_on_the_server_is_re_established(our_http: str) -> None:
    """Ended for real (a DELETE behind the client's back), not by waiting for the TTL: the
    client's open GET stream keeps its session busy, so it never idles out."""
    async with Client.http(f"{our_http}/mcp") as client:
        assert (await client.call_tool("test_simple_text", {})).text
        first = client.transport.session_id
        assert first
        async with aiohttp.ClientSession() as http:
            ended = await http.delete(f"{our_http}/mcp", headers={"Mcp-Session-Id": first})
            assert ended.status == 200
        result = await client.call_tool("test_simple_text", {})
        assert result.text == "This is a simple text response for testing."
        assert client.transport.session_id not in (None, first)  # a new session


class _RecordingTransport(StreamableHttpTransport):
    """Notes the id of every tools/call it posts."""

    def __init__(self, url: str) -> None:
        super().__init__(url)
        self.call_ids: dict[str, Any] = {}

    async def send(self, message: dict[str, Any]) -> None:
        if message.get("method") == "tools/call":
            self.call_ids[message["params"]["arguments"]["message"]] = message["id"]
        await super().send(message)


async def test_a_server_request_is_tied_to_the_call_that_caused_it(our_http: str) -> None:
    """Two calls elicit at once; each elicitation's handler learns which call it belongs to
    (the POST stream it arrived on)."""
    seen: dict[str, Any] = {}
    both_asked = asyncio.Event()

    async def elicit(params: dict[str, Any], ctx: Inbound) -> dict[str, Any]:
        seen[params["message"]] = ctx.related_request_id
        if len(seen) == 2:
            both_asked.set()
        await both_asked.wait()  # both calls are running while each is asked
        return {"action": "accept", "content": {"username": params["message"], "email": "e"}}

    transport = _RecordingTransport(f"{our_http}/mcp")
    async with Client(transport, elicitation_handler=elicit) as client:
        results = await asyncio.gather(
            client.call_tool("test_elicitation", {"message": "first"}),
            client.call_tool("test_elicitation", {"message": "second"}),
        )
    assert "first" in results[0].text and "second" in results[1].text
    assert seen == transport.call_ids
    assert seen["first"] != seen["second"]


async def test_a_response_stream_cut_mid_call_is_resumed(our_http: str) -> None:
    """The server ends the call's stream before the answer (SEP-1699's polling); the
    client resumes it with GET and Last-Event-ID and gets the answer there (the server
    gives streams an id to resume from from 2025-11-25 on)."""
    async with Client.http(f"{our_http}/mcp", protocol_version="2025-11-25") as client:
        result = await client.call_tool("test_reconnection", {}, retries=0)
    assert result.text == "Reconnection test completed"


async def test_accepted_elicitations_get_the_schema_defaults(our_http: str) -> None:
    """SEP-1034: fields the handler left out take the defaults the form offered; what
    it did fill in is kept."""
    async with Client.http(
        f"{our_http}/mcp",
        elicitation_handler=lambda _params: {"action": "accept", "content": {"age": 41}},
    ) as client:
        result = await client.call_tool("test_elicitation_sep1034_defaults", {}, retries=0)
    assert "'name': 'John Doe'" in result.text and "'age': 41" in result.text
    assert "'score': 95.5" in result.text and "'verified': True" in result.text
    assert "'status': 'active'" in result.text
