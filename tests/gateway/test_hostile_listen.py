"""Hostile input to the gateway's `subscriptions/listen` relay (issue 32): URIs no child
serves, malformed filters, more URIs and more listens than it keeps, listens opened and
closed over many rounds, and one front's updates never reaching another.

In process: the gateway's children are library servers reached in memory, its fronts our
client in memory speaking 2026-07-28 (the same over real processes and HTTP, per-session
children by credential: test_gateway_listen.py)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from codex_mcp import Server
from codex_mcp.client import Client, McpError, MemoryTransport
from codex_mcp.client.subscription import Subscription
from codex_mcp.gateway.config.env import GatewayEnv
from codex_mcp.gateway.config.model import ServerConfig
from codex_mcp.gateway.config.parse import parse_document
from codex_mcp.gateway.relay.subscriptions import MAX_LISTEN_URIS, MAX_LISTENS
from codex_mcp.gateway.serve import build_core

from .gateway_helpers import until

MODERN = "2026-07-28"
WATCHED = "test://watched"


class Watched:
    """A child with one resource that changes on a call, and what it was asked to follow."""

    def __init__(self, name: str) -> None:
        self.version = 0
        server = self.server = Server(name, "1.0")

        @server.resource(WATCHED, name="watched", mime_type="text/plain")
        def watched() -> str:
            return f"{name} version {self.version}"

        @server.tool
        def touch() -> str:
            """Change the watched resource."""
            self.version += 1
            server.notify_resource_updated(WATCHED)
            return f"version {self.version}"


def outer(server: str) -> str:
    """How the gateway names the child's watched resource."""
    return f"test://{server}/watched"


@pytest.fixture
async def gateway(tmp_path: Path) -> AsyncIterator[tuple[Any, dict[str, Watched]]]:
    children = {name: Watched(name) for name in ("alpha", "beta")}
    document = {"mcpServers": {name: {"command": "never-run"} for name in children}}
    config = parse_document(document, "test")

    def in_memory(server: ServerConfig) -> MemoryTransport:
        return MemoryTransport(children[server.name].server)

    core = build_core(config, GatewayEnv(cache_dir=tmp_path), open_transport=in_memory)
    await core.start()
    try:
        yield core, children
    finally:
        await core.aclose()


def child(core: Any, name: str) -> Any:
    return next(c for c in core.provider.shared if c.name == name)


def held(core: Any, name: str) -> dict[str, int]:
    """What a 2026-07-28 front's listens hold on child `name`: on the connection its
    requests go to (the child's lane: these children speak both revisions)."""
    kid = child(core, name)
    return core.provider.subscriptions.held(kid.lane.connection or kid.connection)  # type: ignore[no-any-return]


async def nothing_more(events: Subscription, seconds: float = 0.3) -> None:
    """No notification arrives on `events` within `seconds` (after what was due came)."""
    with pytest.raises(TimeoutError):
        await events.next(seconds)


async def test_an_update_reaches_a_listen_that_named_its_uri_and_no_other(gateway: Any) -> None:
    core, _ = gateway
    async with (
        Client.memory(core, mode=MODERN) as a,
        Client.memory(core, mode=MODERN) as b,
    ):
        await a.list_resources()
        async with (
            a.listen(resource_uris=[outer("alpha")]) as a_events,
            b.listen(resource_uris=[outer("beta")]) as b_events,
        ):
            assert a_events.acknowledged["resourceSubscriptions"] == [outer("alpha")]
            assert held(core, "alpha") == {WATCHED: 1}
            assert held(core, "beta") == {WATCHED: 1}
            await a.call_tool("alpha__touch")
            method, params = await a_events.next(10)
            assert method == "notifications/resources/updated"
            assert params["uri"] == outer("alpha")  # in the front's naming
            await nothing_more(b_events)  # b follows beta's, not alpha's
            await b.call_tool("beta__touch")
            assert (await b_events.next(10))[1]["uri"] == outer("beta")
            await nothing_more(a_events)


async def test_uris_no_child_serves_are_followed_by_none(gateway: Any) -> None:
    core, _ = gateway
    foreign = [
        "file:///etc/passwd",
        "test://gamma/watched",  # no such server
        "alpha:watched",  # the namespace without a scheme
        "test://alpha",  # no path after the namespace
        "test://alpha/../beta/watched",
        "x" * 4000,
    ]
    async with Client.memory(core, mode=MODERN) as client:
        await client.list_resources()
        async with client.listen(resource_uris=foreign) as events:
            assert sorted(events.acknowledged["resourceSubscriptions"]) == sorted(foreign)
            # alpha is asked to follow the URI it was named by, as a path under it, only
            assert held(core, "beta") == {}
            assert WATCHED not in held(core, "alpha")
            await client.call_tool("alpha__touch")
            await client.call_tool("beta__touch")
            await nothing_more(events)
        await until(lambda: all(not held(core, n) for n in ("alpha", "beta")))
        assert len(core.provider.subscriptions) == 0


async def test_malformed_listen_params_are_refused_or_ignored(gateway: Any) -> None:
    core, _ = gateway
    async with Client.memory(core, mode=MODERN) as client:
        session = client.session
        for notifications in ("all", 5, None, ["resourceSubscriptions"]):
            with pytest.raises(McpError) as refused:
                await session.request("subscriptions/listen", {"notifications": notifications})
            assert refused.value.code == -32602, notifications
        # Wrong types inside the filter: not followed, the listen still opens.
        for bad in ("test://alpha/watched", {"uri": outer("alpha")}, [1, None, {"a": 1}]):
            subscription = Subscription(session, {"resourceSubscriptions": bad})
            async with subscription as events:
                assert "resourceSubscriptions" not in events.acknowledged, bad
                assert held(core, "alpha") == {}
        # More URIs than one listen may name: refused whole, nothing followed.
        many = [f"test://alpha/r{n}" for n in range(MAX_LISTEN_URIS)] + [outer("alpha")]
        with pytest.raises(McpError) as too_many:
            async with client.listen(resource_uris=many):
                pass
        assert too_many.value.code == -32602
        assert held(core, "alpha") == {}
        assert len(core.provider.subscriptions) == 0


async def test_listens_over_many_rounds_leave_nothing_held(gateway: Any) -> None:
    core, _ = gateway
    async with Client.memory(core, mode=MODERN) as client:
        await client.list_resources()
        for _ in range(30):
            async with client.listen(resource_uris=[outer("alpha"), outer("beta")]):
                assert held(core, "alpha") == {WATCHED: 1}
        # A listen cancelled before its acknowledgement lets go too.
        for _ in range(10):
            opening = asyncio.ensure_future(
                client.listen(resource_uris=[outer("alpha")]).__aenter__()
            )
            await asyncio.sleep(0)
            opening.cancel()
            await asyncio.gather(opening, return_exceptions=True)
        await until(lambda: not held(core, "alpha") and not held(core, "beta"))
        assert len(core.provider.subscriptions) == 0
        # ... and a new listen still works.
        async with client.listen(resource_uris=[outer("alpha")]) as events:
            await client.call_tool("alpha__touch")
            assert (await events.next(10))[1]["uri"] == outer("alpha")


@pytest.mark.slow
async def test_the_listens_the_gateway_follows_are_bounded(gateway: Any) -> None:
    core, _ = gateway
    async with Client.memory(core, mode=MODERN) as client:
        await client.list_resources()
        opened = [client.listen(resource_uris=[outer("alpha")]) for _ in range(MAX_LISTENS)]
        try:
            await asyncio.gather(*(listen.__aenter__() for listen in opened))
            assert len(core.provider.subscriptions) == MAX_LISTENS
            assert held(core, "alpha") == {WATCHED: MAX_LISTENS}
            with pytest.raises(McpError) as refused:
                async with client.listen(resource_uris=[outer("beta")]):
                    pass
            assert "listens" in refused.value.message
            assert held(core, "beta") == {}
            # a listen that follows no resource is the core's alone, and still opens
            async with client.listen(tools=True) as events:
                assert events.acknowledged == {"toolsListChanged": True}
        finally:
            await asyncio.gather(*(listen.__aexit__(None, None, None) for listen in opened))
        await until(lambda: not held(core, "alpha"))
        assert len(core.provider.subscriptions) == 0


async def test_a_listen_from_before_a_restart_does_not_release_a_newer_one(gateway: Any) -> None:
    core, _ = gateway
    async with Client.memory(core, mode=MODERN) as client:
        await client.list_resources()
        before = client.listen(resource_uris=[outer("alpha")])
        await before.__aenter__()
        try:
            first = child(core, "alpha").lane.connection
            await first.session.aclose()  # the connection breaks: the next listen reopens it
            await until(lambda: child(core, "alpha").lane.connection is not first)
            assert held(core, "alpha") == {}  # and forgot what it followed
            await client.list_resources()
            async with client.listen(resource_uris=[outer("alpha")]) as events:
                assert held(core, "alpha") == {WATCHED: 1}
                await before.__aexit__(None, None, None)
                await until(lambda: len(core.provider.subscriptions) == 1)
                assert held(core, "alpha") == {WATCHED: 1}  # still the newer listen's
                await client.call_tool("alpha__touch")
                assert (await events.next(10))[1]["uri"] == outer("alpha")
        finally:
            await before.__aexit__(None, None, None)
