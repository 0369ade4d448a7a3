"""The HTTP transport in-process on 127.0.0.1 (aiohttp's test server): edge cases, one each."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable
from typing import Any

import pytest
from aiohttp import web
from aiohttp.test_utils import TestClient
from codex_mcp import Context, Server
from codex_mcp.transports.http import HttpConfig, create_app

JSON = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
Client = Callable[..., Awaitable[TestClient[Any, Any]]]


def build_server() -> Server:
    server = Server("http-edges")

    @server.tool(read_only=True)
    async def echo(message: str) -> str:
        return message

    @server.tool(read_only=True)
    async def progress(steps: int, ctx: Context) -> str:
        for step in range(1, steps + 1):
            await ctx.report_progress(step, steps)
            await asyncio.sleep(0.05)
        return "done"

    return server


def init(version: str = "2025-06-18", request_id: int = 1) -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "id": request_id,
        "method": "initialize",
        "params": {
            "protocolVersion": version,
            "capabilities": {},
            "clientInfo": {"name": "t", "version": "1"},
        },
    }


def call(
    request_id: Any, name: str, arguments: dict[str, Any], meta: dict[str, Any] | None = None
) -> dict[str, Any]:
    params: dict[str, Any] = {"name": name, "arguments": arguments}
    if meta:
        params["_meta"] = meta
    return {"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": params}


@pytest.fixture
def make_client(aiohttp_client: Any) -> Client:
    async def make(**config: Any) -> TestClient[Any, Any]:
        return await aiohttp_client(create_app(build_server().core, HttpConfig(**config)))  # type: ignore[no-any-return]

    return make


async def open_session(
    client: TestClient[Any, Any], version: str = "2025-06-18", **headers: str
) -> dict[str, str]:
    response = await client.post("/mcp", json=init(version), headers={**JSON, **headers})
    assert response.status == 200, await response.text()
    session = {**JSON, **headers, "Mcp-Session-Id": response.headers["Mcp-Session-Id"]}
    await client.post(
        "/mcp", json={"jsonrpc": "2.0", "method": "notifications/initialized"}, headers=session
    )
    return session


async def test_initialize_issues_a_visible_ascii_session_id(make_client: Client) -> None:
    client = await make_client()
    session = await open_session(client)
    sid = session["Mcp-Session-Id"]
    assert len(sid) >= 32 and all(0x21 <= ord(c) <= 0x7E for c in sid)
    response = await client.post("/mcp", json=call(2, "echo", {"message": "hi"}), headers=session)
    assert response.status == 200
    assert response.content_type == "application/json"
    assert (await response.json())["result"]["content"][0]["text"] == "hi"


async def test_wrong_accept_is_406(make_client: Client) -> None:
    client = await make_client()
    response = await client.post(
        "/mcp", json=init(), headers={"Content-Type": "application/json", "Accept": "text/html"}
    )
    assert response.status == 406


async def test_wrong_content_type_is_415(make_client: Client) -> None:
    client = await make_client()
    response = await client.post(
        "/mcp", data=json.dumps(init()), headers={**JSON, "Content-Type": "text/plain"}
    )
    assert response.status == 415


async def test_bad_json_is_400_parse_error(make_client: Client) -> None:
    client = await make_client()
    response = await client.post("/mcp", data=b"{nope", headers=JSON)
    assert response.status == 400
    assert (await response.json())["error"]["code"] == -32700


async def test_batches_rejected_for_2025_06_18_and_handled_for_2025_03_26(
    make_client: Client,
) -> None:
    client = await make_client()
    modern = await open_session(client)
    batch = [
        {"jsonrpc": "2.0", "id": 5, "method": "ping"},
        {"jsonrpc": "2.0", "id": 6, "method": "ping"},
    ]
    response = await client.post("/mcp", json=batch, headers=modern)
    assert response.status == 400
    old = await open_session(client, "2025-03-26")
    response = await client.post("/mcp", json=batch, headers=old)
    assert response.status == 200
    assert sorted(r["id"] for r in await response.json()) == [5, 6]


async def test_session_errors(make_client: Client) -> None:
    client = await make_client()
    response = await client.post("/mcp", json=call(2, "echo", {"message": "x"}), headers=JSON)
    assert response.status == 400  # no session id
    response = await client.post(
        "/mcp", json=call(2, "echo", {"message": "x"}), headers={**JSON, "Mcp-Session-Id": "nope"}
    )
    assert response.status == 404  # unknown
    session = await open_session(client)
    assert (await client.delete("/mcp", headers=session)).status == 200
    response = await client.post("/mcp", json=call(3, "echo", {"message": "x"}), headers=session)
    assert response.status == 404  # ended


async def test_unsupported_protocol_version_header_is_400(make_client: Client) -> None:
    client = await make_client()
    session = await open_session(client)
    response = await client.post(
        "/mcp",
        json=call(2, "echo", {"message": "x"}),
        headers={**session, "MCP-Protocol-Version": "1999-01-01"},
    )
    assert response.status == 400


async def test_bad_origin_and_host_are_403_and_a_trusted_proxy_passes(make_client: Client) -> None:
    client = await make_client(forwarded_hosts=["mcp.example.com"])
    response = await client.post(
        "/mcp", json=init(), headers={**JSON, "Origin": "https://evil.example"}
    )
    assert response.status == 403
    response = await client.post("/mcp", json=init(), headers={**JSON, "Host": "evil.example"})
    assert response.status == 403
    response = await client.post(
        "/mcp", json=init(), headers={**JSON, "Origin": "http://localhost:5173"}
    )
    assert response.status == 200
    proxied = {
        **JSON,
        "Host": "mcp.example.com",
        "X-Forwarded-Host": "mcp.example.com",
        "Origin": "https://mcp.example.com",
    }
    response = await client.post("/mcp", json=init(), headers=proxied)
    assert response.status == 200


async def test_bearer_tokens_and_sessions_bound_to_their_credential(make_client: Client) -> None:
    client = await make_client(bearer_tokens=["alpha", "beta"])
    response = await client.post("/mcp", json=init(), headers=JSON)
    assert response.status == 401
    assert response.headers["WWW-Authenticate"].startswith("Bearer")
    response = await client.post(
        "/mcp", json=init(), headers={**JSON, "Authorization": "Bearer wrong"}
    )
    assert response.status == 401
    assert 'error="invalid_token"' in response.headers["WWW-Authenticate"]
    session = await open_session(client, Authorization="Bearer alpha")
    ok = await client.post("/mcp", json=call(2, "echo", {"message": "x"}), headers=session)
    assert ok.status == 200
    stolen = {**session, "Authorization": "Bearer beta"}
    assert (
        await client.post("/mcp", json=call(3, "echo", {"message": "x"}), headers=stolen)
    ).status == 404


async def test_oversized_body_is_413(make_client: Client) -> None:
    client = await make_client(max_body_bytes=2048)
    session = await open_session(client)
    response = await client.post(
        "/mcp", json=call(2, "echo", {"message": "x" * 5000}), headers=session
    )
    assert response.status == 413


async def test_progress_turns_the_answer_into_sse_while_the_call_runs(make_client: Client) -> None:
    client = await make_client()
    session = await open_session(client)
    response = await client.post(
        "/mcp", json=call(2, "progress", {"steps": 3}, {"progressToken": "p"}), headers=session
    )
    assert response.content_type == "text/event-stream"
    assert response.headers["X-Accel-Buffering"] == "no"
    events = []
    async for line in response.content:
        if line.startswith(b"data: "):
            events.append(json.loads(line[6:]))
    assert [e.get("method") for e in events] == ["notifications/progress"] * 3 + [None]
    assert events[-1]["result"]["content"][0]["text"] == "done"


async def test_x_mcp_post_stream_forces_sse(make_client: Client) -> None:
    client = await make_client()
    session = await open_session(client)
    response = await client.post(
        "/mcp",
        json=call(2, "echo", {"message": "s"}),
        headers={**session, "X-MCP-POST-STREAM": "1"},
    )
    assert response.content_type == "text/event-stream"
    assert b'"text":"s"' in await response.read()


async def test_get_stream_keepalive_and_resumption(make_client: Client) -> None:
    client = await make_client(keepalive_interval=0.1)
    server_core = client.server.app  # type: ignore[union-attr]
    session = await open_session(client)
    stream = await client.get("/mcp", headers={**session, "Accept": "text/event-stream"})
    assert stream.status == 200
    conflict = await client.get("/mcp", headers={**session, "Accept": "text/event-stream"})
    assert conflict.status == 409
    assert (await asyncio.wait_for(stream.content.readline(), 2)) == b": keepalive\n"
    # A list_changed notification goes to the GET stream with an event id.
    from codex_mcp.transports.http.app import MANAGER_KEY

    core = server_core[MANAGER_KEY].core
    core.provider.notify_list_changed("tools")
    lines = []
    while not any(line.startswith(b"data:") for line in lines):
        lines.append(await asyncio.wait_for(stream.content.readline(), 2))
    event_id = next(line for line in lines if line.startswith(b"id:"))[3:].strip().decode()
    stream.close()
    await asyncio.sleep(0.1)
    core.provider.notify_list_changed("tools")  # sent while nobody listens
    resumed = await client.get(
        "/mcp", headers={**session, "Accept": "text/event-stream", "Last-Event-ID": event_id}
    )
    line = b""
    while not line.startswith(b"data:"):
        line = await asyncio.wait_for(resumed.content.readline(), 2)
    assert b"notifications/tools/list_changed" in line
    resumed.close()


async def test_idle_sessions_are_evicted(make_client: Client) -> None:
    client = await make_client(session_ttl=0.2)
    session = await open_session(client)
    await asyncio.sleep(0.6)
    assert (
        await client.post("/mcp", json=call(2, "echo", {"message": "x"}), headers=session)
    ).status == 404


async def test_session_cap_refuses_new_sessions_clearly(make_client: Client) -> None:
    client = await make_client(max_sessions=2)
    await open_session(client)
    await open_session(client)
    response = await client.post("/mcp", json=init(), headers=JSON)
    assert response.status == 503
    assert "Too many sessions" in (await response.json())["error"]["message"]


async def test_stateless_mode(make_client: Client) -> None:
    client = await make_client(stateless=True)
    response = await client.post("/mcp", json=call(1, "echo", {"message": "alone"}), headers=JSON)
    assert response.status == 200
    assert "Mcp-Session-Id" not in response.headers
    assert (await response.json())["result"]["content"][0]["text"] == "alone"
    assert (await client.get("/mcp", headers={"Accept": "text/event-stream"})).status == 405


async def test_base_path_health_and_readiness(make_client: Client) -> None:
    client = await make_client(base_path="/tools")
    assert (await client.get("/tools/healthz")).status == 200
    ready = await client.get("/tools/readyz")
    assert ready.status == 200 and (await ready.json())["status"] == "ready"
    assert (await client.post("/tools/mcp", json=init(), headers=JSON)).status == 200
    assert (await client.post("/mcp", json=init(), headers=JSON)).status == 404


async def test_single_event_sse(make_client: Client) -> None:
    client = await make_client()
    response = await client.get(
        "/mcp/sse", params={"request": json.dumps(call(9, "echo", {"message": "one"}))}
    )
    body = (await response.read()).decode()
    data = [line for line in body.splitlines() if line.startswith("data:")]
    assert len(data) == 1 and json.loads(data[0][5:])["id"] == 9
    note = {"jsonrpc": "2.0", "method": "notifications/initialized"}
    response = await client.get("/mcp/sse", params={"request": json.dumps(note)})
    assert "data:" not in (await response.read()).decode()


async def test_client_leaving_mid_stream_leaks_no_tasks(make_client: Client) -> None:
    client = await make_client()
    session = await open_session(client)
    baseline = len(asyncio.all_tasks())
    response = await client.post(
        "/mcp", json=call(2, "progress", {"steps": 4}, {"progressToken": 1}), headers=session
    )
    await response.content.readline()
    response.close()  # disconnect mid-stream
    for _ in range(60):
        await asyncio.sleep(0.05)
        if len(asyncio.all_tasks()) <= baseline:
            break
    assert len(asyncio.all_tasks()) <= baseline
    ok = await client.post("/mcp", json=call(3, "echo", {"message": "still here"}), headers=session)
    assert (await ok.json())["result"]["content"][0]["text"] == "still here"


async def test_a_thousand_concurrent_sessions_without_cross_talk(make_client: Client) -> None:
    client = await make_client()
    gate = asyncio.Semaphore(64)

    async def one(index: int) -> bool:
        async with gate:
            session = await open_session(client)
            response = await client.post(
                "/mcp", json=call(index, "echo", {"message": f"m-{index}"}), headers=session
            )
            reply = await response.json()
        return bool(reply["id"] == index and reply["result"]["content"][0]["text"] == f"m-{index}")

    results = await asyncio.wait_for(asyncio.gather(*(one(i) for i in range(1000))), 60)
    assert all(results)


def test_app_is_an_aiohttp_application() -> None:
    assert isinstance(create_app(build_server().core), web.Application)
