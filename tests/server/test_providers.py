"""Providers that know their session, over a real HTTP server on 127.0.0.1 and our client:
concurrent listings where one failing provider costs only its own items, calls routed by
the listing's index, the lifespan and per-session hooks with their cleanup stack, and the
session's settings reaching providers."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Sequence
from typing import Any

import pytest
from codex_mcp.client import Client
from codex_mcp.client.transports.streamable_http import StreamableHttpTransport
from codex_mcp.core import (
    CompositeProvider,
    Provider,
    RequestContext,
    ResourceNotFound,
    ServerCore,
    ServerSession,
    UnknownTool,
)
from codex_mcp.core.jsonrpc import JsonObject
from codex_mcp.transports.http import HttpConfig, create_app


class Events(list[tuple[Any, ...]]):
    """What reached the providers, in order; `await events.seen(item)` waits for one."""

    def __init__(self) -> None:
        super().__init__()
        self.changed = asyncio.Condition()

    def append(self, item: tuple[Any, ...]) -> None:
        super().append(item)
        asyncio.get_running_loop().create_task(self._notify())

    async def _notify(self) -> None:
        async with self.changed:
            self.changed.notify_all()

    async def seen(self, item: tuple[Any, ...], timeout: float = 5.0) -> None:
        async with asyncio.timeout(timeout), self.changed:
            await self.changed.wait_for(lambda: item in self)


class Recording(Provider):
    """Serves tools `<name>_a`, `<name>_b` and a resource; records what reaches it."""

    features = frozenset({"tools", "resources"})  # type: ignore[assignment]

    def __init__(self, name: str, events: Events) -> None:
        super().__init__()
        self.name = name
        self.events = events
        self.tools = [f"{name}_a", f"{name}_b"]
        self.listing = asyncio.Event()

    async def start(self) -> None:
        self.events.append(("start", self.name))

    async def stop(self) -> None:
        self.events.append(("stop", self.name))

    def open_session(self, session: ServerSession) -> None:
        session.state[self] = f"{self.name}-state"
        self.events.append(("open", self.name, session.session_id))

        async def cleanup() -> None:
            self.events.append(("cleanup", self.name, session.session_id))

        session.cleanup.push_async_callback(cleanup)

    async def close_session(self, session: ServerSession) -> None:
        self.events.append(("close", self.name, session.session_id))

    async def list_tools(self, ctx: RequestContext) -> Sequence[JsonObject]:
        self.events.append(("list", self.name, ctx.session.session_id))
        return [{"name": tool, "inputSchema": {"type": "object"}} for tool in self.tools]

    async def call_tool(self, name: str, arguments: JsonObject, ctx: RequestContext) -> JsonObject:
        self.events.append(("call", self.name, name))
        if name not in self.tools:
            raise UnknownTool(name)
        state = ctx.session.state[self]
        return {"content": [{"type": "text", "text": f"{name} in {state}"}]}

    async def list_resources(self, ctx: RequestContext) -> Sequence[JsonObject]:
        return [{"uri": f"mem://{self.name}/doc", "name": "doc"}]

    async def read_resource(self, uri: str, ctx: RequestContext) -> list[JsonObject]:
        if uri != f"mem://{self.name}/doc":
            raise ResourceNotFound(uri)
        return [{"uri": uri, "text": f"doc of {self.name}"}]

    async def subscribe(self, uri: str, ctx: RequestContext) -> None:
        self.events.append(("subscribe", self.name, uri, ctx.session.session_id))

    async def unsubscribe(self, uri: str, ctx: RequestContext) -> None:
        self.events.append(("unsubscribe", self.name, uri))

    async def set_log_level(self, level: str, ctx: RequestContext) -> None:
        self.events.append(("level", self.name, level))

    def roots_changed(self, session: ServerSession) -> None:
        self.events.append(("roots", self.name, session.session_id))


class Failing(Provider):
    features = frozenset({"tools"})  # type: ignore[assignment]
    name = "failing"

    async def list_tools(self, ctx: RequestContext) -> Sequence[JsonObject]:
        raise RuntimeError("backend unreachable")


class Rendezvous(Provider):
    """Lists only once every Rendezvous of its group is listing: proves they run at once."""

    features = frozenset({"tools"})  # type: ignore[assignment]

    def __init__(self, name: str, group: list[Rendezvous]) -> None:
        super().__init__()
        self.name = name
        self.group = group
        self.arrived = asyncio.Event()

    async def list_tools(self, ctx: RequestContext) -> Sequence[JsonObject]:
        self.arrived.set()
        async with asyncio.timeout(5):
            for other in self.group:
                await other.arrived.wait()
        return [{"name": f"{self.name}_tool", "inputSchema": {"type": "object"}}]


@pytest.fixture
async def serve(aiohttp_server: Any) -> AsyncIterator[Any]:
    servers: list[Any] = []

    async def start(provider: Provider, **config: Any) -> tuple[str, ServerCore]:
        core = ServerCore(provider, name="providers", version="1")
        server = await aiohttp_server(create_app(core, HttpConfig(**config)), host="127.0.0.1")
        servers.append(server)
        return str(server.make_url("/mcp")), core

    yield start
    for server in servers:
        await server.close()


async def test_listings_run_at_once_and_a_failing_provider_costs_only_its_items(
    serve: Any, caplog: pytest.LogCaptureFixture
) -> None:
    group: list[Rendezvous] = []
    group += [Rendezvous("one", group), Rendezvous("two", group)]
    url, _ = await serve(CompositeProvider([group[0], Failing(), group[1]]))
    with caplog.at_level(logging.WARNING, logger="codex_mcp.provider"):
        async with Client.http(url) as client:
            names = [tool.name for tool in await client.list_tools()]
    assert names == ["one_tool", "two_tool"]
    assert any(
        "failing: listing tools failed: backend unreachable" in r.message for r in caplog.records
    )


async def test_calls_are_routed_by_the_index_not_tried_in_turn(serve: Any) -> None:
    events = Events()
    first, second = Recording("first", events), Recording("second", events)
    url, _ = await serve(CompositeProvider([first, second]))
    async with Client.http(url) as client:
        # Before any listing, the name is unknown to the index: one listing, then routed.
        assert (await client.call_tool("second_b")).text == "second_b in second-state"
        assert (await client.call_tool("first_a")).text == "first_a in first-state"
        assert (await client.call_tool("second_a")).text == "second_a in second-state"
    calls = [e for e in events if e[0] == "call"]
    # Only the owner was ever called: no provider was asked about another's tool.
    assert calls == [
        ("call", "second", "second_b"),
        ("call", "first", "first_a"),
        ("call", "second", "second_a"),
    ]
    assert len([e for e in events if e[0] == "list"]) == 2  # one listing, both providers


async def test_an_unknown_tool_is_an_error_and_a_changed_list_is_picked_up(serve: Any) -> None:
    events = Events()
    first = Recording("first", events)
    url, _ = await serve(CompositeProvider([first, Recording("second", events)]))
    async with Client.http(url) as client:
        await client.list_tools()
        from codex_mcp.client import McpError

        with pytest.raises(McpError, match="Unknown tool: late"):
            await client.call_tool("late")
        first.tools.append("late")
        first.notify_list_changed("tools")
        assert (await client.call_tool("late")).text == "late in first-state"


async def test_lifespan_and_per_session_hooks_with_their_cleanup(serve: Any) -> None:
    events = Events()
    url, _ = await serve(Recording("p", events), session_ttl=0.3)
    assert events == [("start", "p")]  # started with the app, before any session
    async with Client.http(url) as client:
        session_id = client.transport.session_id
        assert ("open", "p", session_id) in events
        await client.call_tool("p_a")
    # The client's DELETE ended the session: the close hook, then the cleanup stack.
    await events.seen(("cleanup", "p", session_id))
    order = [e[0] for e in events if e[0] in ("close", "cleanup") and e[2] == session_id]
    assert order == ["close", "cleanup"]
    # A session that expires is torn down the same way (no GET stream: it would keep
    # the session busy, and a busy session never expires).
    client = Client(StreamableHttpTransport(url, get_stream=False))
    await client.connect()
    expired = client.transport.session_id
    await events.seen(("cleanup", "p", expired))
    await client.session.aclose()


async def test_the_sessions_settings_reach_the_provider(serve: Any) -> None:
    events = Events()
    url, _ = await serve(CompositeProvider([Recording("p", events)]))
    async with Client.http(url, roots=[{"uri": "file:///tmp", "name": "tmp"}]) as client:
        session_id = client.transport.session_id
        await client.list_resources()
        await client.subscribe_resource("mem://p/doc")
        await client.unsubscribe_resource("mem://p/doc")
        await client.set_logging_level("warning")
        await client.set_roots([{"uri": "file:///other", "name": "other"}])
        await events.seen(("roots", "p", session_id))
    assert ("subscribe", "p", "mem://p/doc", session_id) in events
    assert ("unsubscribe", "p", "mem://p/doc") in events
    assert ("level", "p", "warning") in events
