"""A 2026-07-28 front's `subscriptions/listen` through the gateway to real child processes
(issue 32): the child is subscribed in its own revision (`resources/subscribe`, or a listen
of its own for a 2026-07-28-only child), and its updates come back on the front's stream in
the front's naming, over stdio and Streamable HTTP; a per-session child's only to its own
credential's listens. server-everything (npm) is the real peer; the examples server, as a
legacy child and as a 2026-07-28-only one, the in-house peer."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from codex_mcp.client import Client, McpError
from codex_mcp.client.subscription import Subscription

from .gateway_helpers import (
    EVERYTHING,
    EXAMPLES,
    MISSING_NPM,
    PY,
    ROOT,
    Lines,
    gateway,
    launch_http,
    launch_http_gateway,
    stdio,
    stop,
    until,
    write_config,
)

MODERN = "2026-07-28"
#: How long an update may take to come back (server-everything sends one at once, then
#: every 5 s; a loaded machine is slow to start the children).
DEADLINE = 20.0
STATELESS_ONLY = [PY, str(ROOT / "tests/gateway/servers/stateless_only.py")]
UPDATED = "notifications/resources/updated"


@pytest.fixture
def serve(tmp_path: Path) -> Iterator[Any]:
    """`serve(servers, *args)`: the gateway of `servers` over HTTP; its URL."""
    processes = []

    def start(servers: dict[str, Any], *args: str) -> str:
        process, url = launch_http_gateway(write_config(tmp_path, servers), *args)
        processes.append(process)
        return url

    yield start
    for process in processes:
        stop(process)


async def next_update(events: Subscription, uri: str) -> dict[str, Any]:
    """The next resources/updated on `events` (within the deadline); it names `uri`."""
    method, params = await events.next(DEADLINE)
    assert method == UPDATED, (method, params)
    assert params["uri"] == uri, params
    return params


# -- server-everything: the real peer ---------------------------------------------------


needs_everything = pytest.mark.skipif(not EVERYTHING.exists(), reason=MISSING_NPM)


async def _everything_updates_reach(client: Client) -> None:
    resources = [r.uri for r in await client.list_resources()]
    documents = [u for u in resources if u.startswith("demo://everything/resource/static/")]
    assert documents, resources  # its URIs in our naming: the server's name after the scheme
    uri = documents[0]
    async with client.listen(resource_uris=[uri]) as events:
        assert events.acknowledged == {"resourceSubscriptions": [uri]}
        tools = [t.name for t in await client.list_tools()]
        toggle = next(name for name in tools if "toggle" in name and "subscriber" in name)
        started = await client.call_tool(toggle, {}, retries=0)
        assert "Started" in started.text, started.text
        params = await next_update(events, uri)
        assert params["_meta"]["io.modelcontextprotocol/subscriptionId"] == events.id
        await next_update(events, uri)  # and again, on its 5 s pace


@pytest.mark.interop
@pytest.mark.slow
@needs_everything
async def test_server_everything_updates_reach_a_2026_front_over_stdio(tmp_path: Path) -> None:
    config = write_config(tmp_path, {"everything": stdio(EVERYTHING)})
    async with gateway(config, mode=MODERN) as client:
        assert client.session.stateless is not None  # the front speaks 2026-07-28
        await _everything_updates_reach(client)


@pytest.mark.interop
@pytest.mark.slow
@needs_everything
async def test_server_everything_updates_reach_a_2026_front_over_http(serve: Any) -> None:
    url = serve({"everything": stdio(EVERYTHING)})
    async with Client.http(url, mode=MODERN) as client:
        assert client.session.stateless is not None
        await _everything_updates_reach(client)


@pytest.mark.interop
@pytest.mark.slow
@needs_everything
async def test_server_everything_per_session_updates_over_http(serve: Any) -> None:
    url = serve({"everything": stdio(EVERYTHING, per_session=True)})
    async with Client.http(url, mode=MODERN) as client:
        await _everything_updates_reach(client)


# -- our examples server as the child -------------------------------------------------


WATCHED = "test://{}/watched-resource"


@pytest.mark.slow
@pytest.mark.parametrize("how", ["--refuse", "--stateless"])
async def test_a_2026_only_child_is_followed_by_a_listen_of_its_own(
    tmp_path: Path, how: str
) -> None:
    """The child has no resources/subscribe: the gateway opens its own listen on it."""
    config = write_config(tmp_path, {"mo": stdio(STATELESS_ONLY, how)})
    uri = WATCHED.format("mo")
    async with gateway(config, mode=MODERN) as client:
        await client.list_resources()
        async with client.listen(resource_uris=[uri]) as events:
            await client.call_tool("mo__touch_watched_resource", {}, retries=0)
            await next_update(events, uri)
    updates: list[dict[str, Any]] = []

    def on_notification(method: str, params: dict[str, Any]) -> None:
        if method == UPDATED:
            updates.append(params)

    # A legacy front's resources/subscribe takes the same way to it.
    async with gateway(config, on_notification=on_notification) as legacy:
        await legacy.list_resources()
        await legacy.subscribe_resource(uri)
        await legacy.call_tool("mo__touch_watched_resource", {}, retries=0)
        await until(lambda: updates, timeout=DEADLINE)
        assert updates[0]["uri"] == uri


@pytest.mark.slow
async def test_a_per_session_childs_update_reaches_its_own_credential_only(
    serve: Any, tmp_path: Path
) -> None:
    tokens = tmp_path / "tokens"
    tokens.write_text("token-a\ntoken-b\n")
    url = serve({"ex": stdio(EXAMPLES, per_session=True)}, "--bearer-token-file", str(tokens))
    uri = WATCHED.format("ex")

    def caller(token: str) -> Client:
        return Client.http(url, mode=MODERN, headers={"Authorization": f"Bearer {token}"})

    async with caller("token-a") as a, caller("token-b") as b:
        await a.list_resources()
        await b.list_resources()
        async with (
            a.listen(resource_uris=[uri]) as a_events,
            b.listen(resource_uris=[uri]) as b_events,
        ):
            await a.call_tool("ex__touch_watched_resource", {}, retries=0)
            await next_update(a_events, uri)
            with pytest.raises(TimeoutError):  # the same URI, another credential's child
                await b_events.next(1.0)
            await b.call_tool("ex__touch_watched_resource", {}, retries=0)
            await next_update(b_events, uri)
            with pytest.raises(TimeoutError):
                await a_events.next(1.0)


async def _tool_change_reaches(client: Client, tool: str) -> None:
    before = {t.name for t in await client.list_tools()}
    dynamic = tool.replace("test_trigger_tool_change", "test_dynamic_tool")
    deadline = asyncio.get_running_loop().time() + DEADLINE
    async with client.listen(tools=True) as events:
        await client.call_tool(tool, {}, retries=0)
        # A change is told, after which the listing has it. An earlier change may be told
        # first (a child listed for the first time replaces the listing kept on disk).
        while True:
            left = deadline - asyncio.get_running_loop().time()
            method, params = await events.next(max(left, 0.1))
            assert method == "notifications/tools/list_changed", (method, params)
            after = {t.name for t in await client.list_tools()}
            if (dynamic in after) != (dynamic in before):
                break


@pytest.mark.slow
async def test_a_2026_only_childs_list_changes_reach_the_fronts(tmp_path: Path) -> None:
    """Its listen of ours follows its lists too: a change reaches a 2026-07-28 front's
    listen, and a legacy front's session (as a legacy child's does)."""
    config = write_config(tmp_path, {"mo": stdio(STATELESS_ONLY)})
    async with gateway(config, mode=MODERN) as client:
        await _tool_change_reaches(client, "mo__test_trigger_tool_change")
    changed: list[str] = []
    async with gateway(config, on_notification=lambda method, _: changed.append(method)) as legacy:
        # Up and listed by itself first: the listing the first gateway kept on disk (with
        # the dynamic tool) is otherwise served meanwhile, and its change then is no news.
        await legacy.call_tool("mo__greet", {"name": "x"}, retries=0)
        await legacy.list_tools()
        await legacy.call_tool("mo__test_trigger_tool_change", {}, retries=0)
        await until(lambda: "notifications/tools/list_changed" in changed, timeout=DEADLINE)


@pytest.mark.slow
async def test_a_per_session_childs_list_change_reaches_its_own_credential_only(
    serve: Any, tmp_path: Path
) -> None:
    tokens = tmp_path / "tokens"
    tokens.write_text("token-a\ntoken-b\n")
    url = serve({"ex": stdio(EXAMPLES, per_session=True)}, "--bearer-token-file", str(tokens))

    def caller(token: str) -> Client:
        return Client.http(url, mode=MODERN, headers={"Authorization": f"Bearer {token}"})

    async with caller("token-a") as a, caller("token-b") as b:
        await b.list_tools()
        async with b.listen(tools=True) as b_events:
            await _tool_change_reaches(a, "ex__test_trigger_tool_change")
            with pytest.raises(TimeoutError):  # a's child changed, not b's
                await b_events.next(1.0)


# -- a dual-revision child: the front's calls and its listen reach the same process ----------


async def test_a_2026_fronts_call_is_heard_on_its_listen_of_a_dual_revision_child(
    tmp_path: Path,
) -> None:
    # The examples server speaks both revisions: a 2026-07-28 front's requests go to it in
    # 2026-07-28 (a second connection, for a stdio child a second process). The listen must
    # be held where the front's calls go, or the change its call makes is heard by nobody.
    config = write_config(tmp_path, {"kid": stdio(EXAMPLES)})
    async with gateway(config, mode=MODERN) as client:
        assert client.session.stateless is not None
        uris = [r.uri for r in await client.list_resources()]
        uri = next(u for u in uris if u.endswith("watched-resource"))
        async with client.listen(resource_uris=[uri]) as events:
            assert events.acknowledged == {"resourceSubscriptions": [uri]}
            touched = await client.call_tool("kid__touch_watched_resource", {}, retries=0)
            assert "version" in touched.text, touched.text
            await next_update(events, uri)


# -- a child that cannot be reached ------------------------------------------------------------


async def test_a_subscribe_an_http_child_cannot_take_is_one_error_not_a_traceback(
    tmp_path: Path,
) -> None:
    """The child's server went away: the subscribe is answered with the gateway's error for
    it, naming the server, and the gateway's stderr carries no unhandled error."""
    process, url = launch_http("--serve", str(ROOT / "examples/everything_server.py"))
    errlog = Lines()
    try:
        async with gateway(write_config(tmp_path, {"ex": {"url": url}}), errlog=errlog) as client:
            await client.list_resources()
            stop(process)
            with pytest.raises(McpError) as refused:
                await client.subscribe_resource(WATCHED.format("ex"))
            assert "'ex'" in str(refused.value), refused.value
    finally:
        stop(process)
    assert not [line for line in errlog.lines if "unhandled" in line or "Traceback" in line]
