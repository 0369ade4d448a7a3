"""The client over HTTP: Streamable HTTP against a scriptable aiohttp server (headers, session
expiry, HTTP errors, SSE answers), the official SDK and server-everything; legacy HTTP+SSE
against the official SDK; an HTTP server killed mid-call."""

from __future__ import annotations

import asyncio
import signal
import time
from pathlib import Path
from typing import Any

import pytest
from client_helpers import (
    EVERYTHING_MISSING,
    everything_args,
    free_port,
    sdk_command,
    start_server,
    stop_server,
    wait_for_line,
)
from codex_mcp.client import Client, RequestTimeout, SessionExpired, TransportError
from servers.fake_http import FakeHttpServer


@pytest.fixture
async def fake(aiohttp_server: Any) -> Any:
    state = FakeHttpServer()
    server = await aiohttp_server(state.app(), host="127.0.0.1")
    state.url = str(server.make_url("/mcp"))  # type: ignore[attr-defined]
    return state


async def test_headers_session_and_delete_on_close(fake: Any) -> None:
    async with Client.http(fake.url, headers={"Authorization": "Bearer t"}) as client:
        assert client.transport.session_id == "session-1"
        await client.list_tools()
    posts = [e for e in fake.log if e["http"] == "POST"]
    assert posts[0]["method"] == "initialize"
    assert posts[0]["accept"] == "application/json, text/event-stream"
    assert posts[0]["session"] is None and posts[0]["version"] is None
    for entry in posts[1:]:
        assert entry["session"] == "session-1" and entry["version"] == "2025-06-18"
    assert fake.log[-1]["http"] == "DELETE" and fake.log[-1]["session"] == "session-1"
    assert "GET" in [e["http"] for e in fake.log]  # it tried the GET stream (405: none)


async def test_expired_session_is_reestablished_once(fake: Any) -> None:
    fake.expire_after_calls = 1
    async with Client.http(fake.url) as client:
        assert (await client.call_tool("t", {"n": 1})).text == "called 1"
        # The server forgot the session: the next request gets 404, the client initializes
        # a new session and sends the request again.
        assert (await client.call_tool("t", {"n": 2})).text == "called 2"
        assert client.transport.session_id == "session-2"
    assert fake.methods().count("initialize") == 2
    assert fake.methods().count("notifications/initialized") == 2


async def test_concurrent_requests_share_one_reinitialize(fake: Any) -> None:
    async with Client.http(fake.url) as client:
        fake.sessions.clear()
        results = await asyncio.gather(*(client.call_tool("t", {"n": i}) for i in range(5)))
        assert [r.text for r in results] == [f"called {i}" for i in range(5)]
    assert fake.methods().count("initialize") == 2


async def test_session_expiring_again_is_not_retried_forever(fake: Any) -> None:
    async with Client.http(fake.url) as client:
        fake.always_expire = True
        with pytest.raises(SessionExpired):
            await client.call_tool("t", backoff=None)
    assert fake.methods().count("initialize") == 2  # the first, and exactly one more
    assert fake.methods().count("tools/call") == 2


async def test_transient_http_errors_are_retried(fake: Any) -> None:
    fake.fail_statuses = [503, 429]  # the server says it did not take the call
    waits: list[int] = []
    async with Client.http(fake.url) as client:
        result = await client.call_tool("t", {"n": 7}, backoff=waits.append)
    assert result.text == "called 7" and waits == [1, 2]


async def test_a_call_cut_after_it_was_taken_is_not_run_again(fake: Any) -> None:
    fake.cut_streams = 1
    async with Client.http(fake.url) as client:
        with pytest.raises(TransportError) as failure:
            await client.call_tool("t", {"n": 1}, backoff=None)
        assert failure.value.fate_unknown
        assert fake.calls == 1  # taken once, and not again: it may have had effects
        # Said to be idempotent, the same failure is retried.
        fake.cut_streams = 1
        result = await client.call_tool("t", {"n": 2}, backoff=None, idempotent=True)
        assert result.text == "called 2" and fake.calls == 3


async def test_a_proxy_502_leaves_the_call_alone_unless_idempotent(fake: Any) -> None:
    fake.fail_statuses = [502]
    async with Client.http(fake.url) as client:
        with pytest.raises(TransportError, match="HTTP 502"):
            await client.call_tool("t", {"n": 1}, backoff=None)
        fake.fail_statuses = [502]
        assert (await client.call_tool("t", {"n": 2}, backoff=None, idempotent=True)).text == (
            "called 2"
        )


async def test_client_http_errors_are_not_retried(fake: Any) -> None:
    fake.fail_statuses = [400, 400]
    waits: list[int] = []
    async with Client.http(fake.url) as client:
        with pytest.raises(TransportError, match="HTTP 400"):
            await client.call_tool("t", backoff=waits.append)
    assert waits == [] and fake.fail_statuses == [400]


async def test_sse_answers_with_progress_first(fake: Any) -> None:
    fake.sse = True
    progress: list[dict] = []
    async with Client.http(fake.url) as client:
        result = await client.call_tool("t", {"n": 3}, on_progress=progress.append)
    assert result.text == "called 3"
    assert [p["progress"] for p in progress] == [1]


async def test_unreachable_server_fails_clearly() -> None:
    url = f"http://127.0.0.1:{free_port()}/mcp"
    with pytest.raises(TransportError, match="failed"):
        async with Client.http(url):
            pass


async def test_sdk_streamable_http(sdk_http_url: str, sdk_events: Path) -> None:
    async with Client.http(sdk_http_url, server_name="sdk") as client:
        assert client.server_info["name"] == "sdk-test-server"
        assert client.transport.session_id
        tools = await client.list_tools(qualify=True)
        assert "mcp__sdk__echo" in {t.qualified_name for t in tools}
        assert (await client.call_tool("add", {"a": 1, "b": 2})).text == "3"
        with pytest.raises(RequestTimeout):
            await client.call_tool("slow", {"seconds": 30, "tag": "http1"}, timeout=0.5)
        assert await asyncio.to_thread(wait_for_line, sdk_events, "cancelled http1")
        assert (await client.call_tool("echo", {"message": "after"})).text == "after"
        prompt = await client.get_prompt("summarize", {"text": "x"})
        assert prompt.messages


async def test_sdk_legacy_sse(sdk_sse_url: str) -> None:
    async with Client.sse(sdk_sse_url) as client:
        assert client.server_info["name"] == "sdk-test-server"
        assert (await client.call_tool("echo", {"message": "over sse"})).text == "over sse"
        results = await asyncio.gather(
            *(client.call_tool("add", {"a": i, "b": i}) for i in range(5))
        )
        assert [r.text for r in results] == [str(2 * i) for i in range(5)]
        assert (await client.read_resource("test://greeting")).contents


async def test_everything_streamable_http(everything_http_url: str) -> None:
    sampled: list[dict] = []

    def sampling(params: dict) -> dict:
        sampled.append(params)
        return {"role": "assistant", "content": {"type": "text", "text": "sampled"}, "model": "m"}

    async with Client.http(everything_http_url, sampling_handler=sampling) as client:
        assert client.server_info["name"] == "mcp-servers/everything"
        assert (await client.call_tool("echo", {"message": "hi"})).text == "Echo: hi"
        tools = {t.name for t in await client.list_tools(cache=False)}
        assert "trigger-sampling-request" in tools
        result = await client.call_tool("trigger-sampling-request", {"prompt": "p", "maxTokens": 5})
        assert sampled and "sampled" in result.text
        first = await client.list_resources()
        everything = await client.list_resources(all_pages=True)
        assert len(everything) >= len(first)
        progress: list[dict] = []
        done = await client.call_tool(
            "trigger-long-running-operation",
            {"duration": 1, "steps": 2},
            on_progress=progress.append,
        )
        assert not done.is_error and len(progress) == 2


async def test_a_restarted_server_that_answers_400_for_its_lost_session_is_reinitialized() -> None:
    """server-everything (the TypeScript SDK's examples) answers a session it does not know,
    as after a restart, with 400 "No valid session ID provided", not the spec's 404: the
    session is re-established all the same (it was the gateway's HTTP_RESTART defect)."""
    if EVERYTHING_MISSING:
        pytest.skip(EVERYTHING_MISSING)
    port = free_port()
    args, env = everything_args("streamableHttp"), {"PORT": str(port)}
    proc = start_server(args, port, env)
    try:
        async with Client.http(f"http://127.0.0.1:{port}/mcp") as client:
            assert (await client.call_tool("echo", {"message": "a"})).text == "Echo: a"
            first = client.transport.session_id
            # In a thread: the loop sees the old server's connection close, as it would.
            await asyncio.to_thread(stop_server, proc)
            proc = await asyncio.to_thread(start_server, args, port, env)
            assert (await client.call_tool("echo", {"message": "b"})).text == "Echo: b"
            assert client.transport.session_id not in (None, first)
    finally:
        stop_server(proc)


@pytest.mark.slow
async def test_http_server_killed_mid_call(events_file: Path) -> None:
    port = free_port()
    proc = start_server(
        sdk_command("streamable-http", str(port)),
        port,
        {"EVENTS_FILE": str(events_file)},
    )
    try:
        async with Client.http(f"http://127.0.0.1:{port}/mcp") as client:
            call = asyncio.create_task(
                client.call_tool("slow", {"seconds": 30, "tag": "killed"}, backoff=None)
            )
            assert await asyncio.to_thread(wait_for_line, events_file, "started killed", 20)
            proc.send_signal(signal.SIGKILL)
            started = time.monotonic()
            with pytest.raises(TransportError):
                await asyncio.wait_for(call, 5)
            assert time.monotonic() - started < 1.0
    finally:
        stop_server(proc)
