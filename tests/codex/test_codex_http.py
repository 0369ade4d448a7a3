"""The codex tools over HTTP, one app-server per session: the real Codex CLI's app-server
against the fake model, our HTTP transport on 127.0.0.1 in this event loop, and our client
(which holds the session's GET stream, seed 004's recommended recipe)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from codex_mcp.client import Client
from codex_mcp.client.transports.streamable_http import StreamableHttpTransport
from codex_mcp.codex.provider import CodexProvider
from codex_mcp.codex.session_codex import SessionCodex
from codex_mcp.core.jsonrpc import JsonObject
from codex_mcp.core.server import ServerCore
from codex_mcp.transports.http import HttpConfig, create_app
from interop import fake_responses_provider as fake
from interop.fake_responses_provider import FakeProvider

from .conftest import codex_env, needs_codex
from .processes import group, group_ends
from .raw_http import SSE_ONLY, messages_of, next_message, open_session

pytestmark = [pytest.mark.interop, needs_codex]
ASK = {"approval-policy": "on-request", "sandbox": "read-only"}


class Served:
    def __init__(self, server: Any, core: ServerCore, provider: CodexProvider) -> None:
        self.server = server
        self.url = str(server.make_url("/mcp"))
        self.core = core
        self.provider = provider

    def codex_of(self, client: Client) -> SessionCodex:
        """The server side of a client's session: its Codex."""
        session_id = client.session.transport.session_id  # type: ignore[attr-defined]
        [session] = [s for s in self.core.sessions if s.session_id == session_id]
        return self.provider.session_codex(session)

    def app_server_pid(self, client: Client) -> int:
        driver = self.codex_of(client).current
        assert driver is not None, "no app-server is running for this session"
        pid = driver.connection.pid  # type: ignore[attr-defined]
        assert isinstance(pid, int)
        return pid


Serve = Callable[..., Awaitable[Served]]


@pytest.fixture
async def serve(aiohttp_server: Any, codex_home: Path, workdir: Path) -> AsyncIterator[Serve]:
    async def start(max_app_servers: int = 8, **config: Any) -> Served:
        provider = CodexProvider(
            env=codex_env(codex_home),
            driver_options={"cwd": str(workdir)},
            max_app_servers=max_app_servers,
        )
        core = ServerCore(provider, name="codex-mcp-server", version="test")
        app = create_app(core, HttpConfig(post_stream="header", **config))
        server = await aiohttp_server(app, host="127.0.0.1")
        return Served(server, core, provider)

    yield start


async def slots_free(provider: CodexProvider, timeout: float = 10) -> None:
    """The slot comes back once the server has seen its app-server go, a moment after the
    processes end."""
    async with asyncio.timeout(timeout):
        while provider.running:
            await asyncio.sleep(0.01)


class Events(list[JsonObject]):
    """The codex/event notifications one client received."""

    def __call__(self, method: str, params: JsonObject) -> None:
        if method == "codex/event":
            self.append(params)

    @property
    def threads(self) -> set[str]:
        return {event["_meta"]["threadId"] for event in self}

    def types(self) -> list[str]:
        return [event["msg"]["type"] for event in self]

    async def wait_for(self, kind: str, count: int = 1, timeout: float = 10) -> None:
        """Events reach the GET stream independently of the JSON answer: wait for them."""
        async with asyncio.timeout(timeout):
            while self.types().count(kind) < count:
                await asyncio.sleep(0.01)


async def test_two_sessions_at_once_each_get_their_own_app_server_thread_and_events(
    serve: Serve, fake_model: tuple[FakeProvider, int]
) -> None:
    provider, _ = fake_model
    provider.responder = fake.echo_prompt()
    served = await serve()
    events_a, events_b = Events(), Events()
    async with (
        Client.http(served.url, on_notification=events_a) as a,
        Client.http(served.url, on_notification=events_b) as b,
    ):
        first_a, first_b = await asyncio.gather(
            a.call_tool("codex", {"prompt": "I am A"}, timeout=60, retries=0),
            b.call_tool("codex", {"prompt": "I am B"}, timeout=60, retries=0),
        )
        assert first_a.text == "You said: I am A", first_a.text
        assert first_b.text == "You said: I am B", first_b.text
        thread_a = first_a.structured_content["threadId"]  # type: ignore[index]
        thread_b = first_b.structured_content["threadId"]  # type: ignore[index]
        assert thread_a != thread_b
        assert served.app_server_pid(a) != served.app_server_pid(b)
        assert served.provider.running == 2

        # A continues its thread: the model sees A's first turn, and nothing of B's.
        reply = await a.call_tool(
            "codex-reply", {"threadId": thread_a, "prompt": "again"}, timeout=60, retries=0
        )
        assert reply.structured_content == {"threadId": thread_a, "content": "You said: again"}
        assert fake.user_texts(provider.requests[-1]) == ["I am A", "again"]
        # B cannot reach A's thread: it lives in another app-server.
        stolen = await b.call_tool(
            "codex-reply", {"threadId": thread_a, "prompt": "mine now"}, retries=0
        )
        assert stolen.is_error
        assert f"Session not found for thread_id: {thread_a}" in stolen.text

        await events_a.wait_for("task_complete", 2)
        await events_b.wait_for("task_complete", 1)
        assert events_a.threads == {thread_a}
        assert events_b.threads == {thread_b}
        assert events_a.types()[0] == "session_configured"
        # No event arrived twice (a message travels on one stream only).
        assert events_a.types().count("task_complete") == 2
        assert events_b.types().count("task_complete") == 1


async def test_approvals_are_elicited_over_http_and_declines_run_nothing(
    serve: Serve, fake_model: tuple[FakeProvider, int], workdir: Path
) -> None:
    provider, _ = fake_model
    answers = ["accept", "decline"]
    asked: list[JsonObject] = []

    def on_elicit(params: JsonObject) -> JsonObject:
        asked.append(params)
        return {"action": answers.pop(0)}

    served = await serve()
    arguments = {"prompt": "go", "cwd": str(workdir), **ASK}
    async with Client.http(served.url, elicitation_handler=on_elicit) as client:
        provider.responder = fake.run_command("echo yes > accepted.txt")
        accepted = await client.call_tool("codex", arguments, timeout=60, retries=0)
        assert not accepted.is_error, accepted.text
        assert (workdir / "accepted.txt").read_text() == "yes\n"

        provider.responder = fake.run_command("echo no > declined.txt")
        declined = await client.call_tool("codex", arguments, timeout=60, retries=0)
        assert declined.is_error
        assert "the client declined" in declined.text
        assert not (workdir / "declined.txt").exists()
    assert [params["codex_elicitation"] for params in asked] == ["exec-approval"] * 2
    assert "echo yes > accepted.txt" in asked[0]["message"]


async def test_a_cancelled_call_stops_its_turn_and_the_session_keeps_serving(
    serve: Serve, fake_model: tuple[FakeProvider, int]
) -> None:
    provider, _ = fake_model
    provider.responder = fake.stall()
    events = Events()
    served = await serve()
    async with Client.http(served.url, on_notification=events) as client:
        call = asyncio.create_task(
            client.call_tool("codex", {"prompt": "never ends"}, timeout=None, retries=0)
        )
        await asyncio.wait_for(provider.stalled.wait(), 60)
        call.cancel()  # our client sends notifications/cancelled for it
        with pytest.raises(asyncio.CancelledError):
            await call
        await asyncio.wait_for(provider.hung_up.wait(), 15)  # Codex stopped asking the model
        [thread_id] = events.threads
        provider.responder = fake.echo_prompt()
        result = await client.call_tool(
            "codex-reply", {"prompt": "next", "threadId": thread_id}, timeout=60, retries=0
        )
        assert result.structured_content == {"threadId": thread_id, "content": "You said: next"}


async def test_a_sessions_app_server_stops_when_it_is_deleted_and_when_it_expires(
    serve: Serve, fake_model: tuple[FakeProvider, int]
) -> None:
    provider, _ = fake_model
    provider.responder = fake.echo_prompt()
    served = await serve(session_ttl=1.0)
    deleted = Client.http(served.url)
    async with deleted:
        assert (await deleted.call_tool("codex", {"prompt": "x"}, timeout=60, retries=0)).text
        pid = served.app_server_pid(deleted)
        assert group(pid)  # the Node wrapper and the native app-server
    # Leaving the block sent DELETE: the session ends, its app-server with it.
    await group_ends(pid)
    await slots_free(served.provider)

    # A client that went quiet (no GET stream either: an open stream keeps a session alive).
    expiring = Client(StreamableHttpTransport(served.url, get_stream=False))
    await expiring.connect()
    try:
        assert (await expiring.call_tool("codex", {"prompt": "y"}, timeout=60, retries=0)).text
        pid = served.app_server_pid(expiring)
        # Idle for longer than the session TTL: the server expires it, app-server and all.
        await group_ends(pid, timeout=20)
        await slots_free(served.provider)
    finally:
        await expiring.aclose()


async def test_past_the_cap_a_call_gets_an_error_result_until_a_session_ends(
    serve: Serve, fake_model: tuple[FakeProvider, int]
) -> None:
    provider, _ = fake_model
    provider.responder = fake.echo_prompt()
    served = await serve(max_app_servers=1)
    async with Client.http(served.url) as second:
        async with Client.http(served.url) as first:
            assert not (await first.call_tool("codex", {"prompt": "1"}, timeout=60)).is_error
            refused = await second.call_tool("codex", {"prompt": "2"}, timeout=60, retries=0)
            assert refused.is_error
            assert "1 Codex app-servers are already running" in refused.text
            assert "--codex-max-app-servers" in refused.text
            pid = served.app_server_pid(first)
        await group_ends(pid)
        await slots_free(served.provider)  # the first session ended: its slot is free again
        again = await second.call_tool("codex", {"prompt": "2"}, timeout=60, retries=0)
        assert again.text == "You said: 2"


async def test_a_missing_codex_is_one_clear_error_result(
    aiohttp_server: Any, tmp_path: Path
) -> None:
    missing = tmp_path / "no-codex-here"
    provider = CodexProvider(env={"CODEX_BIN": str(missing)})
    core = ServerCore(provider, name="codex-mcp-server", version="test")
    server = await aiohttp_server(create_app(core, HttpConfig()), host="127.0.0.1")
    async with Client.http(str(server.make_url("/mcp"))) as client:
        result = await client.call_tool("codex", {"prompt": "x"}, retries=0)
    assert result.is_error
    assert result.text.startswith(f"Codex CLI not found: CODEX_BIN={missing} does not exist")
    assert provider.running == 0


async def test_seed_004_streaming_events_on_get_with_json_post_or_all_on_a_post_stream(
    serve: Serve, fake_model: tuple[FakeProvider, int]
) -> None:
    """The two recipes with raw HTTP: GET SSE + JSON POST, then X-MCP-POST-STREAM: 1."""
    provider, _ = fake_model
    provider.responder = fake.echo_prompt()
    served = await serve()
    curl = {"Content-Type": "application/json", "Accept": "*/*"}
    async with aiohttp.ClientSession() as http:
        session = {**await open_session(http, served.url), **curl}
        stream = await http.get(served.url, headers={**session, **SSE_ONLY})

        async def get_events_of(request_id: int) -> list[JsonObject]:
            """GET stream messages up to this call's task_complete; all must be its own."""
            found: list[JsonObject] = []
            while not found or found[-1]["params"]["msg"]["type"] != "task_complete":
                message = await next_message(stream, timeout=30)
                assert message is not None
                assert message["method"] == "codex/event", message
                assert message["params"]["_meta"]["requestId"] == request_id, message
                found.append(message)
            return found

        first = await http.post(served.url, json=codex_call(2, "one"), headers=session)
        assert first.content_type == "application/json"
        answer = await first.json()
        assert answer["result"]["structuredContent"]["content"] == "You said: one"
        on_get = await get_events_of(2)
        assert on_get[0]["params"]["msg"]["type"] == "session_configured"
        assert len({json.dumps(m, sort_keys=True) for m in on_get}) == len(on_get)

        streamed = await http.post(
            served.url, json=codex_call(3, "two"), headers={**session, "X-MCP-POST-STREAM": "1"}
        )
        assert streamed.content_type == "text/event-stream"
        on_post = await messages_of(streamed, timeout=30)
        assert on_post[-1]["result"]["structuredContent"]["content"] == "You said: two"
        assert {m["params"]["_meta"]["requestId"] for m in on_post[:-1]} == {3}
        assert "task_complete" in [m["params"]["msg"]["type"] for m in on_post[:-1]]

        # Nothing of call 3 went to the GET stream: the next thing there is call 4's.
        third = await http.post(served.url, json=codex_call(4, "three"), headers=session)
        assert (await third.json())["result"]["structuredContent"]["content"] == "You said: three"
        assert await get_events_of(4)
        stream.close()


def codex_call(request_id: int, prompt: str) -> JsonObject:
    return {
        "jsonrpc": "2.0",
        "id": request_id,
        "method": "tools/call",
        "params": {"name": "codex", "arguments": {"prompt": prompt}},
    }


async def test_2026_07_28_requests_share_an_app_server_per_caller_and_cannot_approve(
    serve: Serve, fake_model: tuple[FakeProvider, int], workdir: Path
) -> None:
    """No session: threads live in one app-server per caller for the server's lifetime,
    reached by threadId; events stream on the request's own response; approvals, which
    would need a server-to-client request mid-turn, are refused with the reason."""
    provider, _ = fake_model
    provider.responder = fake.echo_prompt()
    served = await serve()
    events = Events()
    async with Client.http(served.url, mode="2026-07-28", on_notification=events) as client:
        first = await client.call_tool("codex", {"prompt": "modern"}, timeout=60, retries=0)
        assert first.text == "You said: modern", first.text
        thread_id = first.structured_content["threadId"]  # type: ignore[index]
        assert events.threads == {thread_id} and "task_complete" in events.types()
    async with Client.http(served.url, mode="2026-07-28") as again:  # a new connection
        reply = await again.call_tool(
            "codex-reply", {"threadId": thread_id, "prompt": "still there?"}, timeout=60
        )
        assert reply.text == "You said: still there?"
        assert served.provider.running == 1
        provider.responder = fake.run_command("echo no > modern.txt")
        refused = await again.call_tool(
            "codex", {"prompt": "go", "cwd": str(workdir), **ASK}, timeout=60, retries=0
        )
        assert refused.is_error
        assert "2026-07-28 request cannot be asked for approval" in refused.text
        assert not (workdir / "modern.txt").exists()
    # The callers' app-server lives as long as the server: it stops when the server does.
    codex = served.core.stateless_state[(served.provider, None)]
    assert codex.current is not None
    pid = codex.current.connection.pid
    await served.server.close()
    await group_ends(pid)


async def test_a_2026_07_28_caller_closing_its_stream_interrupts_the_turn(
    serve: Serve, fake_model: tuple[FakeProvider, int]
) -> None:
    provider, _ = fake_model
    provider.responder = fake.stall()
    served = await serve()
    async with Client.http(served.url, mode="2026-07-28") as client:
        call = asyncio.create_task(
            client.call_tool("codex", {"prompt": "never ends"}, timeout=None, retries=0)
        )
        await asyncio.wait_for(provider.stalled.wait(), 60)
        call.cancel()  # a stateless client cancels by closing the request's stream
        with pytest.raises(asyncio.CancelledError):
            await call
        await asyncio.wait_for(provider.hung_up.wait(), 15)  # the turn was interrupted
        provider.responder = fake.echo_prompt()
        after = await client.call_tool("codex", {"prompt": "next"}, timeout=60, retries=0)
        assert after.text == "You said: next"


@pytest.mark.parametrize("on_hangup", ["cancel", "keep"])
async def test_a_client_that_hangs_up_stops_its_turn(
    serve: Serve, fake_model: tuple[FakeProvider, int], on_hangup: str
) -> None:
    """Seed 004: hanging up on a running `codex` call interrupts its turn (on_hangup=cancel,
    what `--serve codex` chooses); with on_hangup=keep it runs on, resumable, as the
    Streamable HTTP default has it."""
    provider, _ = fake_model
    provider.responder = fake.stall()
    served = await serve(on_hangup=on_hangup)
    async with aiohttp.ClientSession() as http:
        session = await open_session(http, served.url)
        call = {
            "jsonrpc": "2.0",
            "id": 7,
            "method": "tools/call",
            "params": {"name": "codex", "arguments": {"prompt": "never ends"}},
        }
        response = await http.post(served.url, json=call, headers=session)
        await asyncio.wait_for(provider.stalled.wait(), 60)
        response.close()  # hang up: no notifications/cancelled, the connection just goes
        [core_session] = served.core.sessions
        if on_hangup == "cancel":
            await asyncio.wait_for(provider.hung_up.wait(), 15)  # the turn was interrupted
            assert not core_session.is_in_flight(7)
        else:
            with pytest.raises(TimeoutError):
                await asyncio.wait_for(asyncio.shield(provider.hung_up.wait()), 1.0)
            assert core_session.is_in_flight(7)
