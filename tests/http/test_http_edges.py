"""The HTTP transport in-process on 127.0.0.1 (aiohttp's test server): edge cases, one each."""

from __future__ import annotations

import asyncio
import json

from aiohttp import web
from codex_mcp.transports.http import create_app
from codex_mcp.transports.http.app import MANAGER_KEY
from codex_mcp.transports.http.streams import Ticker
from http_helpers import (
    JSON,
    SSE_ONLY,
    build_test_server,
    call,
    init,
    messages_of,
    next_event,
    notification,
    open_session,
    text_of,
    watch_hold,
)
from http_process import MakeClient

ECHO = call(2, "echo", {"message": "x"})


async def test_initialize_issues_a_visible_ascii_session_id(make_client: MakeClient) -> None:
    client = await make_client()
    session = await open_session(client)
    sid = session["Mcp-Session-Id"]
    assert len(sid) >= 32 and all(0x21 <= ord(c) <= 0x7E for c in sid)
    other = await open_session(client)
    assert other["Mcp-Session-Id"] != sid
    response = await client.post("/mcp", json=call(2, "echo", {"message": "hi"}), headers=session)
    assert response.status == 200
    assert response.content_type == "application/json"
    assert text_of(await response.json()) == "hi"


async def test_wrong_accept_is_406(make_client: MakeClient) -> None:
    client = await make_client()
    response = await client.post(
        "/mcp", json=init(), headers={"Content-Type": "application/json", "Accept": "text/html"}
    )
    assert response.status == 406
    session = await open_session(client)
    response = await client.get("/mcp", headers={**session, "Accept": "application/json"})
    assert response.status == 406  # GET opens an SSE stream


async def test_wrong_content_type_is_415(make_client: MakeClient) -> None:
    client = await make_client()
    response = await client.post(
        "/mcp", data=json.dumps(init()), headers={**JSON, "Content-Type": "text/plain"}
    )
    assert response.status == 415


async def test_bad_json_is_400_parse_error(make_client: MakeClient) -> None:
    client = await make_client()
    response = await client.post("/mcp", data=b"{nope", headers=JSON)
    assert response.status == 400
    assert (await response.json())["error"]["code"] == -32700


async def test_batch_rejected_for_2025_06_18(make_client: MakeClient) -> None:
    client = await make_client()
    session = await open_session(client)
    batch = [{"jsonrpc": "2.0", "id": 5, "method": "ping"}, ECHO]
    response = await client.post("/mcp", json=batch, headers=session)
    assert response.status == 400
    assert "batch" in (await response.json())["error"]["message"]


async def test_batch_handled_for_2025_03_26(make_client: MakeClient) -> None:
    client = await make_client()
    session = await open_session(client, version="2025-03-26")
    batch = [
        {"jsonrpc": "2.0", "id": 5, "method": "ping"},
        call(6, "echo", {"message": "in a batch"}),
        notification("notifications/progress", {"progressToken": "x", "progress": 1}),
    ]
    response = await client.post("/mcp", json=batch, headers=session)
    assert response.status == 200
    replies = {r["id"]: r for r in await response.json()}
    assert sorted(replies) == [5, 6]
    assert text_of(replies[6]) == "in a batch"


async def test_no_session_is_400(make_client: MakeClient) -> None:
    client = await make_client()
    await open_session(client)
    response = await client.post("/mcp", json=ECHO, headers=JSON)
    assert response.status == 400
    assert "Mcp-Session-Id" in (await response.json())["error"]["message"]


async def test_unknown_session_is_404(make_client: MakeClient) -> None:
    client = await make_client()
    await open_session(client)
    response = await client.post("/mcp", json=ECHO, headers={**JSON, "Mcp-Session-Id": "nope"})
    assert response.status == 404


async def test_ended_session_is_404(make_client: MakeClient) -> None:
    client = await make_client()
    session = await open_session(client)
    assert (await client.post("/mcp", json=ECHO, headers=session)).status == 200
    assert (await client.delete("/mcp", headers=session)).status == 200
    assert (await client.post("/mcp", json=ECHO, headers=session)).status == 404
    assert (await client.get("/mcp", headers={**session, **SSE_ONLY})).status == 404
    assert (await client.delete("/mcp", headers=session)).status == 404


async def test_delete_ends_a_running_call_with_404(make_client: MakeClient) -> None:
    client = await make_client()
    session = await open_session(client)
    started, _ = watch_hold("delete")
    running = asyncio.create_task(
        client.post("/mcp", json=call(2, "hold", {"tag": "delete"}), headers=session)
    )
    await asyncio.wait_for(started.wait(), 5)  # DELETE comes second, always
    assert (await client.delete("/mcp", headers=session)).status == 200
    response = await asyncio.wait_for(running, 5)
    assert response.status == 404
    assert "while the request was running" in (await response.json())["error"]["message"]


async def test_unsupported_protocol_version_header_is_400(make_client: MakeClient) -> None:
    client = await make_client()
    session = await open_session(client)
    response = await client.post(
        "/mcp", json=ECHO, headers={**session, "MCP-Protocol-Version": "1999-01-01"}
    )
    assert response.status == 400
    assert "1999-01-01" in (await response.json())["error"]["message"]


async def test_bad_origin_is_403(make_client: MakeClient) -> None:
    client = await make_client()
    for origin in ("https://evil.example", "null", "http://localhost.evil.example"):
        response = await client.post("/mcp", json=init(), headers={**JSON, "Origin": origin})
        assert response.status == 403, origin
    response = await client.post(
        "/mcp", json=init(), headers={**JSON, "Origin": "http://localhost:5173"}
    )
    assert response.status == 200


async def test_bad_host_is_403_on_loopback(make_client: MakeClient) -> None:
    client = await make_client()
    for host in ("evil.example", "localhost.evil.example", "127.0.0.1.nip.io:8000"):
        response = await client.post("/mcp", json=init(), headers={**JSON, "Host": host})
        assert response.status == 403, host
    for host in ("localhost:9", "127.0.0.1", "[::1]:8000"):
        response = await client.post("/mcp", json=init(), headers={**JSON, "Host": host})
        assert response.status == 200, host


async def test_host_behind_a_proxy_needs_an_allowed_x_forwarded_host(
    make_client: MakeClient,
) -> None:
    client = await make_client(forwarded_hosts=["mcp.example.com"])
    public = {**JSON, "Host": "mcp.example.com"}
    assert (await client.post("/mcp", json=init(), headers=public)).status == 403
    untrusted = {**public, "X-Forwarded-Host": "other.example.com"}
    assert (await client.post("/mcp", json=init(), headers=untrusted)).status == 403
    proxied = {
        **public,
        "X-Forwarded-Host": "mcp.example.com",
        "Origin": "https://mcp.example.com",
    }
    response = await client.post("/mcp", json=init(), headers=proxied)
    assert response.status == 200
    foreign = {**proxied, "Origin": "https://evil.example"}
    assert (await client.post("/mcp", json=init(), headers=foreign)).status == 403


async def test_missing_token_is_401_with_a_challenge(make_client: MakeClient) -> None:
    client = await make_client(bearer_tokens=["alpha"])
    response = await client.post("/mcp", json=init(), headers=JSON)
    assert response.status == 401
    assert response.headers["WWW-Authenticate"].startswith("Bearer")
    assert (await client.get("/healthz")).status == 200  # probes stay open


async def test_bad_token_is_401_invalid_token(make_client: MakeClient) -> None:
    client = await make_client(bearer_tokens=["alpha"])
    for header in ("Bearer wrong", "Bearer alphaa", "Basic alpha", "alpha"):
        response = await client.post("/mcp", json=init(), headers={**JSON, "Authorization": header})
        assert response.status == 401, header
        assert response.headers["WWW-Authenticate"].startswith("Bearer"), header
    response = await client.post(
        "/mcp", json=init(), headers={**JSON, "Authorization": "Bearer wrong"}
    )
    assert 'error="invalid_token"' in response.headers["WWW-Authenticate"]
    response = await client.post(
        "/mcp", json=init(), headers={**JSON, "Authorization": "Bearer alpha"}
    )
    assert response.status == 200


async def test_a_session_is_bound_to_its_credential(make_client: MakeClient) -> None:
    client = await make_client(bearer_tokens=["alpha", "beta"])
    session = await open_session(client, Authorization="Bearer alpha")
    assert (await client.post("/mcp", json=ECHO, headers=session)).status == 200
    stolen = {**session, "Authorization": "Bearer beta"}
    assert (await client.post("/mcp", json=ECHO, headers=stolen)).status == 404
    assert (await client.get("/mcp", headers={**stolen, **SSE_ONLY})).status == 404
    assert (await client.delete("/mcp", headers=stolen)).status == 404
    query = {"request": json.dumps(ECHO)}
    response = await client.get("/mcp/sse", params=query, headers=stolen)
    assert response.status == 404
    assert (await client.post("/mcp", json=ECHO, headers=session)).status == 200


async def test_oversized_body_is_413(make_client: MakeClient) -> None:
    client = await make_client(max_body_bytes=2048)
    session = await open_session(client)
    big = call(2, "echo", {"message": "x" * 5000})
    assert (await client.post("/mcp", json=big, headers=session)).status == 413
    small = call(3, "echo", {"message": "x" * 1000})
    assert (await client.post("/mcp", json=small, headers=session)).status == 200


async def test_progress_turns_the_answer_into_sse_while_the_call_runs(
    make_client: MakeClient,
) -> None:
    client = await make_client()
    session = await open_session(client)
    response = await client.post(
        "/mcp", json=call(2, "progress", {"steps": 3}, {"progressToken": "p"}), headers=session
    )
    assert response.content_type == "text/event-stream"
    assert response.headers["X-Accel-Buffering"] == "no"
    assert response.headers["Cache-Control"].startswith("no-cache")
    events = await messages_of(response)
    methods = [e.get("method") for e in events]
    assert methods == ["notifications/progress", "notifications/message"] * 3 + [None]
    assert text_of(events[-1]) == "done "


async def test_json_only_client_gets_json_and_notifications_on_the_get_stream(
    make_client: MakeClient,
) -> None:
    client = await make_client()
    session = await open_session(client)
    stream = await client.get("/mcp", headers={**session, **SSE_ONLY})
    response = await client.post(
        "/mcp",
        json=call(2, "progress", {"steps": 2, "tag": "j"}, {"progressToken": "p"}),
        headers={**session, "Accept": "application/json"},
    )
    assert response.content_type == "application/json"
    assert text_of(await response.json()) == "done j"
    seen = []
    while len(seen) < 4:
        event = await next_event(stream)
        assert event is not None
        if event.get("data"):
            seen.append(json.loads(event["data"])["method"])
    assert seen == ["notifications/progress", "notifications/message"] * 2
    stream.close()


async def test_x_mcp_post_stream_forces_sse(make_client: MakeClient) -> None:
    client = await make_client()
    session = await open_session(client)
    response = await client.post(
        "/mcp",
        json=call(2, "echo", {"message": "s"}),
        headers={**session, "X-MCP-POST-STREAM": "1"},
    )
    assert response.content_type == "text/event-stream"
    assert [text_of(m) for m in await messages_of(response)] == ["s"]


async def test_a_second_get_stream_is_409(make_client: MakeClient) -> None:
    client = await make_client()
    session = await open_session(client)
    stream = await client.get("/mcp", headers={**session, **SSE_ONLY})
    assert stream.status == 200
    assert (await client.get("/mcp", headers={**session, **SSE_ONLY})).status == 409
    stream.close()


async def test_a_dropped_get_stream_can_be_reopened_at_once(make_client: MakeClient) -> None:
    client = await make_client(keepalive_interval=30)
    session = await open_session(client)
    stream = await client.get("/mcp", headers={**session, **SSE_ONLY})
    stream.close()
    for _ in range(20):
        await asyncio.sleep(0.05)
        again = await client.get("/mcp", headers={**session, **SSE_ONLY})
        if again.status == 200:
            break
        again.close()
    assert again.status == 200  # not 409 until the next keepalive finds the old one gone
    again.close()


async def test_get_stream_keepalive_comments(make_client: MakeClient) -> None:
    client = await make_client(keepalive_interval=0.1)
    session = await open_session(client)
    stream = await client.get("/mcp", headers={**session, **SSE_ONLY})
    assert stream.headers["X-Accel-Buffering"] == "no"
    comments = [await next_event(stream, timeout=2) for _ in range(3)]
    assert comments == [{"comment": "keepalive"}] * 3
    stream.close()


async def test_get_stream_resumes_with_last_event_id(make_client: MakeClient) -> None:
    client = await make_client()
    manager = client.server.app[MANAGER_KEY]  # type: ignore[union-attr]
    core = manager.core
    session = await open_session(client)
    stream = await client.get("/mcp", headers={**session, **SSE_ONLY})
    core.provider.notify_list_changed("tools")
    first = await next_event(stream)
    assert first is not None and "list_changed" in first["data"]
    stream.close()
    standalone = manager.sessions[session["Mcp-Session-Id"]].streams.standalone
    for _ in range(250):  # until the server has seen the client leave
        if standalone.queue is None:
            break
        await asyncio.sleep(0.02)
    assert standalone.queue is None
    core.provider.notify_list_changed("tools")  # sent while nobody listens
    core.provider.notify_list_changed("prompts")
    resumed = await client.get(
        "/mcp", headers={**session, **SSE_ONLY, "Last-Event-ID": first["id"]}
    )
    missed = [await next_event(resumed) for _ in range(2)]
    # Either order: a second tools change within 50 ms of the first is held to the end of
    # that window (decision 72), so the prompts change may be written before it.
    assert sorted(json.loads(e["data"])["method"] for e in missed if e) == [
        "notifications/prompts/list_changed",
        "notifications/tools/list_changed",
    ]
    ids = [first["id"], *(e["id"] for e in missed if e)]
    assert len(set(ids)) == 3
    resumed.close()


async def test_post_sse_stream_resumes_with_last_event_id(make_client: MakeClient) -> None:
    client = await make_client()
    session = await open_session(client)
    response = await client.post(
        "/mcp",
        json=call(7, "progress", {"steps": 4, "delay": 0.15, "tag": "r"}, {"progressToken": 1}),
        headers=session,
    )
    first = await next_event(response)
    assert first is not None and json.loads(first["data"])["method"] == "notifications/progress"
    response.close()  # the connection drops after the first event
    resumed = await client.get(
        "/mcp", headers={**session, **SSE_ONLY, "Last-Event-ID": first["id"]}
    )
    assert resumed.status == 200
    rest = await messages_of(resumed)
    assert [m.get("method") for m in rest] == [
        "notifications/message",
        *["notifications/progress", "notifications/message"] * 3,
        None,
    ]
    assert rest[-1]["id"] == 7 and text_of(rest[-1]) == "done r"


async def test_cancellation_ends_the_post_and_frees_the_id(make_client: MakeClient) -> None:
    client = await make_client()
    session = await open_session(client)
    started, _ = watch_hold("cancel")
    running = asyncio.create_task(
        client.post("/mcp", json=call(2, "hold", {"tag": "cancel"}), headers=session)
    )
    await asyncio.wait_for(started.wait(), 5)
    cancel = notification("notifications/cancelled", {"requestId": 2, "reason": "user"})
    assert (await client.post("/mcp", json=cancel, headers=session)).status == 202
    response = await asyncio.wait_for(running, 5)  # no response to a cancelled request
    assert response.status == 200 and await response.read() == b""
    again = await client.post("/mcp", json=call(2, "echo", {"message": "reused"}), headers=session)
    assert text_of(await again.json()) == "reused"


async def test_idle_sessions_are_evicted(make_client: MakeClient) -> None:
    client = await make_client(session_ttl=0.2)
    sessions = client.server.app[MANAGER_KEY].sessions  # type: ignore[union-attr]
    idle = await open_session(client)
    busy = await open_session(client)
    started, release = watch_hold("busy")
    running = asyncio.create_task(
        client.post("/mcp", json=call(2, "hold", {"tag": "busy"}), headers=busy)
    )
    await asyncio.wait_for(started.wait(), 5)
    for _ in range(250):  # the sweep runs every ttl/4
        if idle["Mcp-Session-Id"] not in sessions:
            break
        await asyncio.sleep(0.02)
    assert (await client.post("/mcp", json=ECHO, headers=idle)).status == 404
    assert busy["Mcp-Session-Id"] in sessions  # a busy session stays, however long
    release.set()
    assert text_of(await (await running).json()) == "released busy"


async def test_session_cap_refuses_new_sessions_clearly(make_client: MakeClient) -> None:
    client = await make_client(max_sessions=2)
    first = await open_session(client)
    await open_session(client)
    response = await client.post("/mcp", json=init(), headers=JSON)
    assert response.status == 503
    assert "Too many sessions" in (await response.json())["error"]["message"]
    legacy = await client.get("/sse", headers=SSE_ONLY)
    assert legacy.status == 503
    await client.delete("/mcp", headers=first)
    assert (await client.post("/mcp", json=init(), headers=JSON)).status == 200


async def test_stateless_mode(make_client: MakeClient) -> None:
    client = await make_client(stateless=True)
    response = await client.post("/mcp", json=init(), headers=JSON)
    assert response.status == 200 and "Mcp-Session-Id" not in response.headers
    response = await client.post("/mcp", json=call(1, "echo", {"message": "alone"}), headers=JSON)
    assert response.status == 200
    assert "Mcp-Session-Id" not in response.headers
    assert text_of(await response.json()) == "alone"
    streamed = await client.post(
        "/mcp", json=call(2, "progress", {"steps": 2}, {"progressToken": "s"}), headers=JSON
    )
    assert [m.get("method") for m in await messages_of(streamed)][-1] is None
    assert (await client.get("/mcp", headers=SSE_ONLY)).status == 405
    assert (await client.delete("/mcp", headers=JSON)).status == 405
    assert len(client.server.app[MANAGER_KEY].sessions) == 0  # type: ignore[union-attr]


async def test_base_path(make_client: MakeClient) -> None:
    client = await make_client(base_path="/tools/")
    session = await open_session(client, url="/tools/mcp")
    response = await client.post("/tools/mcp", json=ECHO, headers=session)
    assert text_of(await response.json()) == "x"
    assert (await client.post("/mcp", json=init(), headers=JSON)).status == 404
    legacy = await client.get("/tools/sse", headers=SSE_ONLY)
    endpoint = await next_event(legacy)
    assert endpoint is not None and endpoint["event"] == "endpoint"
    assert endpoint["data"].startswith("/tools/messages?session_id=")
    legacy.close()


async def test_health_and_readiness(make_client: MakeClient) -> None:
    client = await make_client(base_path="/tools", bearer_tokens=["t"])
    health = await client.get("/tools/healthz")
    assert health.status == 200 and (await health.json())["status"] == "ok"
    await open_session(client, url="/tools/mcp", Authorization="Bearer t")
    ready = await client.get("/tools/readyz", headers={"Authorization": "Bearer t"})
    body = await ready.json()
    assert ready.status == 200 and body["status"] == "ready" and body["sessions"] == 1


async def test_readiness_takes_the_bearer_token_unless_opened(make_client: MakeClient) -> None:
    """/readyz tells how busy the server is: like /mcp, it takes the token; a probe that
    cannot send one needs the operator to say so (public_readyz). /healthz stays open."""
    guarded = await make_client(bearer_tokens=["t"])
    for headers in ({}, {"Authorization": "Bearer wrong"}):
        refused = await guarded.get("/readyz", headers=headers)
        assert refused.status == 401 and "sessions" not in await refused.text()
        assert refused.headers["WWW-Authenticate"].startswith("Bearer")
    assert (await guarded.get("/healthz")).status == 200
    opened = await make_client(bearer_tokens=["t"], public_readyz=True)
    assert (await opened.get("/readyz")).status == 200
    assert (await (await make_client()).get("/readyz")).status == 200  # no tokens: nothing to take


async def test_single_event_sse_answers_with_exactly_one_message_event(
    make_client: MakeClient,
) -> None:
    client = await make_client()
    progress_call = call(9, "progress", {"steps": 2}, {"progressToken": "x"})
    response = await client.get("/mcp/sse", params={"request": json.dumps(progress_call)})
    assert response.content_type == "text/event-stream"
    events = []
    while (event := await next_event(response)) is not None:
        events.append(event)
    assert len(events) == 1 and events[0]["event"] == "message"
    reply = json.loads(events[0]["data"])
    assert reply["id"] == 9 and text_of(reply) == "done "


async def test_single_event_sse_for_a_notification_sends_no_event(
    make_client: MakeClient,
) -> None:
    client = await make_client()
    note = notification("notifications/initialized")
    response = await client.get("/mcp/sse", params={"request": json.dumps(note)})
    assert response.status == 200 and await response.read() == b""
    assert (await client.get("/mcp/sse", params={"request": "{nope"})).status == 400
    assert (await client.get("/mcp/sse")).status == 400


async def test_single_event_sse_in_a_session(make_client: MakeClient) -> None:
    client = await make_client()
    session = await open_session(client)
    response = await client.get("/mcp/sse", params={"request": json.dumps(ECHO)}, headers=session)
    assert [text_of(m) for m in await messages_of(response)] == ["x"]


async def test_client_leaving_mid_stream_leaks_no_tasks(make_client: MakeClient) -> None:
    client = await make_client(keepalive_interval=30)
    session = await open_session(client)
    manager = client.server.app[MANAGER_KEY]  # type: ignore[union-attr]
    await asyncio.sleep(0.05)
    baseline = len(asyncio.all_tasks())
    get_stream = await client.get("/mcp", headers={**session, **SSE_ONLY})
    legacy = await client.get("/sse", headers=SSE_ONLY)
    await next_event(legacy)
    post = await client.post(
        "/mcp",
        json=call(2, "progress", {"steps": 4}, {"progressToken": 1}),
        headers=session,
    )
    await next_event(post)
    assert len(asyncio.all_tasks()) > baseline
    for response in (get_stream, legacy, post):
        response.close()  # disconnect mid-stream
    for _ in range(100):
        await asyncio.sleep(0.02)
        if len(asyncio.all_tasks()) <= baseline:
            break
    assert len(asyncio.all_tasks()) <= baseline, asyncio.all_tasks()
    assert len(manager.sessions) == 1  # the legacy session ended with its stream
    assert manager.sessions[session["Mcp-Session-Id"]].busy == 0
    ok = await client.post("/mcp", json=call(3, "echo", {"message": "still"}), headers=session)
    assert text_of(await ok.json()) == "still"


def test_create_app_gives_an_aiohttp_application() -> None:
    assert isinstance(create_app(build_test_server().core), web.Application)


async def test_legacy_sse_post_needs_a_live_session(make_client: MakeClient) -> None:
    client = await make_client()
    response = await client.post("/messages?session_id=nope", json=ECHO)
    assert response.status == 404
    legacy = await client.get("/sse", headers=SSE_ONLY)
    endpoint = await next_event(legacy)
    assert endpoint is not None
    accepted = await client.post(endpoint["data"], json=init(version="2024-11-05"))
    assert accepted.status == 202
    reply = await next_event(legacy)
    assert reply is not None and json.loads(reply["data"])["id"] == 1
    legacy.close()


async def test_a_silent_call_turns_its_post_into_sse_with_keepalives(
    make_client: MakeClient,
) -> None:
    client = await make_client(keepalive_interval=0.1)
    session = await open_session(client)
    response = await client.post("/mcp", json=call(40, "wait", {"seconds": 0.45}), headers=session)
    assert response.headers["Content-Type"].startswith("text/event-stream")
    events = []
    while (event := await next_event(response, timeout=2)) is not None:
        events.append(event)
    keepalives = [e for e in events if e.get("comment") == "keepalive"]
    assert len(keepalives) >= 2
    results = [json.loads(e["data"]) for e in events if e.get("data")]
    assert [r["id"] for r in results] == [40]
    assert text_of(results[0]) == "waited"
    assert events[-1].get("data"), "the result comes after the keepalives"


async def test_a_silent_call_stays_json_for_a_json_only_client(make_client: MakeClient) -> None:
    client = await make_client(keepalive_interval=0.1)
    session = await open_session(client)
    json_only = {**session, "Accept": "application/json"}
    response = await client.post("/mcp", json=call(41, "wait", {"seconds": 0.3}), headers=json_only)
    assert response.headers["Content-Type"].startswith("application/json")
    assert text_of(await response.json()) == "waited"


async def test_a_quick_call_is_still_plain_json(make_client: MakeClient) -> None:
    client = await make_client(keepalive_interval=0.1)
    session = await open_session(client)
    response = await client.post("/mcp", json=ECHO, headers=session)
    assert response.headers["Content-Type"].startswith("application/json")
    assert text_of(await response.json()) == "x"


async def test_an_answer_ready_at_once_arms_no_keepalive_timer(make_client: MakeClient) -> None:
    """A keepalive timer starts only when a POST's reader has to wait: an answer that is
    ready when the call returns goes out with no timer made and cancelled for it, while a
    silent call still gets its keepalives (the test above)."""
    client = await make_client(keepalive_interval=0.1)
    session = await open_session(client)
    loop = asyncio.get_running_loop()
    timers: list[object] = []
    call_later = loop.call_later

    def counting(delay: float, callback: object, *args: object, **kwargs: object) -> object:
        if isinstance(getattr(callback, "__self__", None), Ticker):
            timers.append(callback)
        return call_later(delay, callback, *args, **kwargs)  # type: ignore[arg-type]

    loop.call_later = counting  # type: ignore[method-assign,assignment]
    try:
        for index in range(20):
            response = await client.post(
                "/mcp", json=call(100 + index, "echo", {"message": f"m{index}"}), headers=session
            )
            assert response.headers["Content-Type"].startswith("application/json")
            assert text_of(await response.json()) == f"m{index}"
        assert timers == []
        response = await client.post(
            "/mcp", json=call(200, "wait", {"seconds": 0.35}), headers=session
        )
        events = []
        while (event := await next_event(response, timeout=2)) is not None:
            events.append(event)
        assert any(e.get("comment") == "keepalive" for e in events)
        assert timers, "a call that makes its reader wait arms the timer"
    finally:
        del loop.call_later  # type: ignore[method-assign]


async def test_accept_is_read_the_same_way_for_every_decision(make_client: MakeClient) -> None:
    """The Accept header, parsed once per POST, still decides each of: 406, JSON or SSE."""
    client = await make_client()
    session = await open_session(client)
    cases = [
        ("text/html", 406, None),
        ("application/json", 200, "application/json"),
        ("text/event-stream", 200, "text/event-stream"),  # only SSE admitted: SSE always
        ("text/*", 200, "text/event-stream"),
        ("application/*", 200, "application/json"),
        ("*/*", 200, "application/json"),
        ("TEXT/HTML;q=0.9, Application/JSON;q=0.5", 200, "application/json"),
        ("application/json, text/event-stream", 200, "application/json"),
    ]
    for index, (accept, status, content_type) in enumerate(cases):
        response = await client.post(
            "/mcp",
            json=call(300 + index, "echo", {"message": "a"}),
            headers={**session, "Accept": accept},
        )
        assert response.status == status, accept
        if content_type is not None:
            assert response.content_type == content_type, accept
        await response.read()
