"""2026-07-28 over Streamable HTTP: the routing headers checked against the body, the
revision's statuses, no sessions, streams that cancel when closed, and legacy sessions
untouched on the same endpoint (serve_http on 127.0.0.1, in the test's loop, so the
core can be looked at)."""

from __future__ import annotations

import asyncio
import base64
import contextlib
import importlib.util
import json
import logging
from collections.abc import AsyncIterator
from typing import Any

import aiohttp
import pytest
from codex_mcp import Context, Server
from codex_mcp.core.server import ServerCore
from codex_mcp.transports.http import HttpConfig, serve_http

from .stateless_helpers import EXAMPLES, SUBSCRIPTION_ID, accept, envelope, params, text_of

JSON_AND_SSE = "application/json, text/event-stream"


def examples_core() -> ServerCore:
    spec = importlib.util.spec_from_file_location("everything_for_http", EXAMPLES)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    core: ServerCore = module.server.core
    return core


@contextlib.asynccontextmanager
async def served(core: ServerCore, **config: Any) -> AsyncIterator[str]:
    stop = asyncio.Event()
    listening: asyncio.Future[str] = asyncio.get_running_loop().create_future()
    task = asyncio.create_task(
        serve_http(core, HttpConfig(port=0, **config), stop=stop, on_listening=listening.set_result)
    )
    done, _ = await asyncio.wait([task, listening], return_when=asyncio.FIRST_COMPLETED)
    if task in done:
        task.result()
    try:
        yield listening.result()
    finally:
        stop.set()
        await asyncio.wait_for(task, 30)


def headers(method: str, name: str | None = None, **extra: str) -> dict[str, str]:
    out = {"Accept": JSON_AND_SSE, "MCP-Protocol-Version": "2026-07-28", "Mcp-Method": method}
    if name is not None:
        out["Mcp-Name"] = name
    out.update(extra)
    return out


def body(request_id: Any, method: str, payload: Any) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": request_id, "method": method, "params": payload}


async def post(
    http: aiohttp.ClientSession, url: str, message: Any, head: dict[str, str]
) -> tuple[int, Any]:
    async with http.post(url, json=message, headers=head) as response:
        return response.status, await response.json(content_type=None)


@pytest.fixture
async def examples_url() -> AsyncIterator[str]:
    async with served(examples_core()) as url:
        yield url


async def test_headers_are_checked_against_the_body(examples_url: str) -> None:
    url = examples_url
    call = params(name="greet", arguments={"name": "Ann"})
    async with aiohttp.ClientSession() as http:
        status, ok = await post(
            http, url, body(1, "tools/call", call), headers("tools/call", "greet")
        )
        assert status == 200 and ok["result"]["resultType"] == "complete"
        assert text_of(ok["result"]) == "Hello, Ann!"
        cases = [
            headers("tools/list", "greet"),  # Mcp-Method disagrees
            headers("tools/call"),  # Mcp-Name missing
            headers("tools/call", "other"),  # Mcp-Name disagrees
            headers("TOOLS/CALL", "greet"),  # values are case-sensitive
            {**headers("tools/call", "greet"), "MCP-Protocol-Version": "2026-07-29"},
        ]
        for n, head in enumerate(cases):
            status, refused = await post(http, url, body(10 + n, "tools/call", call), head)
            assert status == 400 and refused["error"]["code"] == -32020, head
            assert refused["id"] == 10 + n  # the request's id, never null
        padded = headers("tools/call", "  greet  ", **{"mcp-method": "tools/call"})
        status, _ = await post(http, url, body(20, "tools/call", call), padded)
        assert status == 200  # whitespace around a value, and header names in any case
        encoded = headers("tools/call", "=?base64?" + base64.b64encode(b"greet").decode() + "?=")
        assert (await post(http, url, body(21, "tools/call", call), encoded))[0] == 200
        async with http.get(url.replace("/mcp", "/readyz")) as ready:
            assert (await ready.json())["sessions"] == 0  # stateless requests open no session


async def test_the_statuses_of_the_revision(examples_url: str) -> None:
    url = examples_url
    async with aiohttp.ClientSession() as http:
        # A mismatch is told before the version is judged; then the version.
        v999 = {"_meta": envelope(**{"io.modelcontextprotocol/protocolVersion": "v999"})}
        status, mismatch = await post(
            http, url, body(1, "server/discover", v999), headers("server/discover")
        )
        assert (status, mismatch["error"]["code"]) == (400, -32020)
        status, old = await post(
            http,
            url,
            body(2, "server/discover", v999),
            {**headers("server/discover"), "MCP-Protocol-Version": "v999"},
        )
        assert (status, old["error"]["code"]) == (400, -32022)
        assert old["error"]["data"] == {"supported": ["2026-07-28"], "requested": "v999"}
        status, bare = await post(http, url, body(3, "tools/list", {}), headers("tools/list"))
        assert (status, bare["error"]["code"], bare["id"]) == (400, -32602, 3)
        status, unknown = await post(
            http, url, body(4, "nope/nope", params()), headers("nope/nope")
        )
        assert (status, unknown["error"]["code"]) == (404, -32601)
        status, removed = await post(
            http, url, body(5, "initialize", params()), headers("initialize")
        )
        assert (status, removed["error"]["code"]) == (404, -32601)
        call = params({}, name="test_missing_capability", arguments={})
        status, missing = await post(
            http, url, body(6, "tools/call", call), headers("tools/call", "test_missing_capability")
        )
        assert (status, missing["error"]["code"]) == (400, -32021)
        gone = params(uri="test://nowhere")
        status, not_found = await post(
            http, url, body(7, "resources/read", gone), headers("resources/read", "test://nowhere")
        )
        assert (status, not_found["error"]["code"]) == (200, -32602)
        assert not_found["error"]["data"] == {"uri": "test://nowhere"}
        notification = {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": params()}
        async with http.post(
            url, json=notification, headers=headers("notifications/cancelled")
        ) as r:
            assert r.status == 202
        for verb in (http.get, http.delete):
            async with verb(
                url, headers={"MCP-Protocol-Version": "2026-07-28", "Accept": JSON_AND_SSE}
            ) as r:
                assert r.status == 405 and r.headers["Allow"] == "POST"


async def test_x_mcp_header_arguments(examples_url: str) -> None:
    url = examples_url
    call = params(name="test_header_param", arguments={"region": "eu-west"})
    head = headers("tools/call", "test_header_param")
    async with aiohttp.ClientSession() as http:
        status, missing = await post(http, url, body(1, "tools/call", call), head)
        assert (status, missing["error"]["code"]) == (400, -32020)
        wrong = {**head, "Mcp-Param-Region": "us-east"}
        assert (await post(http, url, body(2, "tools/call", call), wrong))[0] == 400
        right = {**head, "mcp-param-region": "eu-west"}
        status, ok = await post(http, url, body(3, "tools/call", call), right)
        assert status == 200 and text_of(ok["result"]) == "region eu-west"


async def test_a_legacy_session_on_the_same_endpoint(examples_url: str) -> None:
    url = examples_url
    initialize = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "legacy", "version": "1"},
        },
    }
    async with aiohttp.ClientSession() as http:
        async with http.post(url, json=initialize, headers={"Accept": JSON_AND_SSE}) as r:
            session = r.headers["Mcp-Session-Id"]
            assert (await r.json())["result"]["protocolVersion"] == "2025-06-18"
        legacy = {
            "Accept": JSON_AND_SSE,
            "Mcp-Session-Id": session,
            "MCP-Protocol-Version": "2025-06-18",
        }
        call = {
            "jsonrpc": "2.0",
            "id": 2,
            "method": "tools/call",
            "params": {"name": "greet", "arguments": {"name": "L"}},
        }
        async with http.post(url, json=call, headers=legacy) as r:
            assert (await r.json())["result"] == {
                "content": [{"type": "text", "text": "Hello, L!"}]
            }
        async with http.get(url, headers={**legacy, "Accept": "text/event-stream"}) as r:
            assert r.status == 200  # its GET stream, as before
        async with http.delete(url, headers=legacy) as r:
            assert r.status == 200


async def test_listen_over_http_and_closing_the_stream_ends_it() -> None:
    core = examples_core()
    async with served(core) as url, aiohttp.ClientSession() as http:
        listen = body(7, "subscriptions/listen", params(notifications={"toolsListChanged": True}))
        response = await http.post(url, json=listen, headers=headers("subscriptions/listen"))
        assert response.headers["Content-Type"] == "text/event-stream"
        assert response.headers["X-Accel-Buffering"] == "no"
        ack = await _next_event(response)
        assert ack["method"] == "notifications/subscriptions/acknowledged"
        assert ack["params"]["_meta"] == {SUBSCRIPTION_ID: 7}
        trigger = params(name="test_trigger_tool_change", arguments={})
        await post(
            http,
            url,
            body(8, "tools/call", trigger),
            headers("tools/call", "test_trigger_tool_change"),
        )
        changed = await _next_event(response)
        assert changed == {
            "jsonrpc": "2.0",
            "method": "notifications/tools/list_changed",
            "params": {"_meta": {SUBSCRIPTION_ID: 7}},
        }
        assert len(core.subscriptions) == 1
        response.close()  # the client leaves: the subscription ends with its stream
        for _ in range(200):
            if len(core.subscriptions) == 0:
                break
            await asyncio.sleep(0.01)
        assert len(core.subscriptions) == 0


async def test_closing_a_call_stream_cancels_the_call() -> None:
    server = Server("cancellable")
    started = asyncio.Event()
    cancelled = asyncio.Event()

    @server.tool()
    async def wait_forever(ctx: Context) -> str:
        started.set()
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            cancelled.set()
            raise
        return "never"

    async with served(server.core) as url, aiohttp.ClientSession() as http:
        call = body(1, "tools/call", params(name="wait_forever", arguments={}))
        pending = asyncio.create_task(
            http.post(url, json=call, headers=headers("tools/call", "wait_forever"))
        )
        await asyncio.wait_for(started.wait(), 10)
        pending.cancel()  # the client hangs up before the answer
        with contextlib.suppress(asyncio.CancelledError):
            await pending
        await asyncio.wait_for(cancelled.wait(), 10)


@pytest.mark.slow
async def test_state_and_tasks_are_bound_to_the_credential(
    caplog: pytest.LogCaptureFixture,
) -> None:
    core = examples_core()
    caplog.set_level(logging.WARNING, "codex_mcp.http")
    async with served(core, bearer_tokens=("alpha-token", "beta-token")) as url:
        # One process without Redis signs with its own key, and that is fine: no warning.
        assert not any("requestState keys" in r.message for r in caplog.records)
        alpha = {"Authorization": "Bearer alpha-token"}
        beta = {"Authorization": "Bearer beta-token"}
        async with aiohttp.ClientSession() as http:
            call = {"name": "test_input_required_result_tampered_state", "arguments": {}}
            head = headers("tools/call", call["name"])
            _, first = await post(
                http, url, body(1, "tools/call", params(**call)), {**head, **alpha}
            )
            retry = params(
                **call,
                inputResponses={"confirm": accept(ok=True)},
                requestState=first["result"]["requestState"],
            )
            _, stolen = await post(http, url, body(2, "tools/call", retry), {**head, **beta})
            assert stolen["error"]["data"] == {"reason": "wrong_request"}
            _, created = await post(
                http,
                url,
                body(3, "tools/call", params(name="slow_compute", arguments={"seconds": 5})),
                {**headers("tools/call", "slow_compute"), **alpha},
            )
            task_id = created["result"]["taskId"]
            get = body(4, "tasks/get", params(taskId=task_id))
            _, theirs = await post(http, url, get, {**headers("tasks/get", task_id), **beta})
            assert theirs["error"]["code"] == -32602  # someone else's task does not exist
            _, mine = await post(http, url, get, {**headers("tasks/get", task_id), **alpha})
            assert mine["result"]["status"] == "working"


async def _next_event(response: aiohttp.ClientResponse) -> Any:
    async with asyncio.timeout(10):
        while True:
            line = (await response.content.readline()).decode()
            if line.startswith("data:"):
                return json.loads(line[5:])


async def test_shutdown_answers_open_listen_streams() -> None:
    """The server ends a subscription gracefully: its listen request is answered (an
    empty result tagged with the subscription id) and the stream closes, instead of the
    shutdown waiting out its timeout."""
    stop = asyncio.Event()
    listening: asyncio.Future[str] = asyncio.get_running_loop().create_future()
    serving = asyncio.create_task(
        serve_http(
            examples_core(),
            HttpConfig(port=0, shutdown_timeout=30),
            stop=stop,
            on_listening=listening.set_result,
        )
    )
    url = await listening
    async with aiohttp.ClientSession() as http:
        listen = body(
            "sub", "subscriptions/listen", params(notifications={"toolsListChanged": True})
        )
        response = await http.post(url, json=listen, headers=headers("subscriptions/listen"))
        assert (await _next_event(response))["method"] == "notifications/subscriptions/acknowledged"
        stop.set()
        ended = await _next_event(response)
        assert ended["id"] == "sub"
        assert ended["result"]["resultType"] == "complete"
        assert ended["result"]["_meta"][SUBSCRIPTION_ID] == "sub"
        await asyncio.wait_for(serving, 10)  # well before the 30 s shutdown timeout


async def test_modern_calls_count_against_the_cap_of_calls_in_flight() -> None:
    server = Server("capped")
    started = asyncio.Event()
    release = asyncio.Event()

    @server.tool()
    async def hold() -> str:
        started.set()
        await release.wait()
        return "released"

    @server.tool()
    def quick() -> str:
        return "quick"

    async with served(server.core, max_inflight=1) as url, aiohttp.ClientSession() as http:
        first = asyncio.create_task(
            post(
                http, url, body(1, "tools/call", params(name="hold")), headers("tools/call", "hold")
            )
        )
        await asyncio.wait_for(started.wait(), 10)
        async with http.get(url.replace("/mcp", "/readyz")) as ready:
            assert (await ready.json())["calls_in_flight"] == 1
        async with http.post(
            url,
            json=body(2, "tools/call", params(name="quick")),
            headers=headers("tools/call", "quick"),
        ) as refused:
            assert refused.status == 503 and refused.headers["Retry-After"] == "1"
            assert (await refused.json())["id"] == 2
        # A listen stream waits rather than works: it does not take a call's place.
        listen = body(3, "subscriptions/listen", params(notifications={"toolsListChanged": True}))
        stream = await http.post(url, json=listen, headers=headers("subscriptions/listen"))
        assert (await _next_event(stream))["method"] == "notifications/subscriptions/acknowledged"
        release.set()
        assert text_of((await first)[1]["result"]) == "released"
        assert (
            await post(
                http,
                url,
                body(4, "tools/call", params(name="quick")),
                headers("tools/call", "quick"),
            )
        )[0] == 200
        stream.close()


async def test_listen_streams_count_against_the_session_cap() -> None:
    """A listen stream holds its connection as long as a session's GET stream: past
    --max-sessions (sessions, throwaway ones and listen streams together), 503."""
    listen = body(7, "subscriptions/listen", params(notifications={"toolsListChanged": True}))
    listen_headers = headers("subscriptions/listen")
    async with served(examples_core(), max_sessions=2) as url, aiohttp.ClientSession() as http:
        readyz = url.replace("/mcp", "/readyz")
        streams = [await http.post(url, json=listen, headers=listen_headers) for _ in range(2)]
        for stream in streams:
            ack = await _next_event(stream)
            assert ack["method"] == "notifications/subscriptions/acknowledged"
        async with http.get(readyz) as ready:
            assert (await ready.json())["listen_streams"] == 2
        async with http.post(url, json=listen, headers=listen_headers) as refused:
            assert refused.status == 503 and refused.headers["Retry-After"] == "1"
            answer = await refused.json()
            assert answer["id"] == 7 and "Too many sessions" in answer["error"]["message"]
        legacy_init = {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "t", "version": "1"},
            },
        }
        async with http.post(url, json=legacy_init, headers={"Accept": JSON_AND_SSE}) as full:
            assert full.status == 503
        streams[0].close()  # one leaves: there is room again
        async with asyncio.timeout(10):
            while True:
                async with http.get(readyz) as ready:
                    if (await ready.json())["listen_streams"] == 1:
                        break
                await asyncio.sleep(0.02)
        again = await http.post(url, json=listen, headers=listen_headers)
        assert again.status == 200
        assert (await _next_event(again))["method"] == "notifications/subscriptions/acknowledged"
        again.close()
        streams[1].close()


async def test_x_mcp_header_arguments_follow_a_changed_listing() -> None:
    """Headers are looked up in an index of the listing made once per listing: a tool
    replaced by one naming another header is checked against the new one at once."""
    server = Server("headers")

    def schema(header: str) -> dict[str, Any]:
        properties = {"region": {"type": "string", "x-mcp-header": header}}
        return {"type": "object", "properties": properties, "required": ["region"]}

    def located(region: str) -> str:
        return f"region {region}"

    server.add_tool(located, name="located", input_schema=schema("Region"))
    call = params(name="located", arguments={"region": "eu-west"})
    head = headers("tools/call", "located")
    async with served(server.core) as url, aiohttp.ClientSession() as http:
        old = {**head, "Mcp-Param-Region": "eu-west"}
        new = {**head, "Mcp-Param-Zone": "eu-west"}
        assert (await post(http, url, body(1, "tools/call", call), old))[0] == 200
        assert (await post(http, url, body(2, "tools/call", call), new))[0] == 400
        server.remove_tool("located")
        server.add_tool(located, name="located", input_schema=schema("Zone"))
        status, ok = await post(http, url, body(3, "tools/call", call), new)
        assert status == 200 and text_of(ok["result"]) == "region eu-west"
        assert (await post(http, url, body(4, "tools/call", call), old))[0] == 400
        server.remove_tool("located")
        status, gone = await post(http, url, body(5, "tools/call", call), new)
        assert "error" in gone or gone["result"].get("isError"), gone
