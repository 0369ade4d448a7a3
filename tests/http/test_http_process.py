"""The HTTP server as a real subprocess: behind a real nginx, graceful SIGTERM, tokens from a
file, hang-ups, and logs (session ids on stderr, bearer tokens redacted in the file log)."""

from __future__ import annotations

import asyncio
import json
import logging
import signal
import socket
import time
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from codex_mcp.session_logs import RedactBearer
from http_helpers import (
    JSON,
    SSE_ONLY,
    call,
    init,
    messages_of,
    next_event,
    open_session,
    text_of,
)
from http_process import SERVERS, HttpProcess
from nginx_proxy import NginxProxies

PUBLIC_HOST = "mcp.example.test"
Start = Callable[..., HttpProcess]


async def test_sigterm_lets_the_in_flight_call_finish(http_process: Start) -> None:
    server = http_process("--serve", str(SERVERS / "interactive.py"))
    async with aiohttp.ClientSession() as http:
        session = await open_session(http, server.url)
        stream = await http.get(server.url, headers={**session, **SSE_ONLY})
        call_task = asyncio.create_task(
            http.post(server.url, json=call(2, "slow", {"seconds": 1}), headers=session)
        )
        await asyncio.to_thread(server.wait_for_line, "slow call started")
        server.process.send_signal(signal.SIGTERM)
        response = await asyncio.wait_for(call_task, 10)
        assert text_of(await response.json()) == "slept 1 s"
        assert await asyncio.wait_for(stream.read(), 10) == b""  # the GET stream was closed
    assert await asyncio.to_thread(server.process.wait, 10) == 0
    assert "shutting down" in server.stderr


MODERN_META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {},
    "io.modelcontextprotocol/clientInfo": {"name": "drain-test", "version": "1"},
}


async def answer_of(response: Awaitable[aiohttp.ClientResponse]) -> dict[str, Any]:
    """The one JSON-RPC message of a JSON or SSE answer."""
    async with await response as reply:
        if reply.content_type == "text/event-stream":
            [message] = [m for m in await messages_of(reply, timeout=30) if "id" in m]
            return message
        answer: dict[str, Any] = await reply.json()
        return answer


@pytest.mark.parametrize("stateless", [False, True])
async def test_sigterm_answers_every_call_within_the_drain_time(
    http_process: Start, stateless: bool
) -> None:
    """Calls with no session (a --stateless POST, GET /mcp/sse without one, a 2026-07-28
    POST) are drained like a session's: each gets its answer (the cancelled error) once
    --shutdown-timeout has passed, not a dropped connection at twice that."""
    drain = 1.0
    flags = ("--stateless",) if stateless else ()
    server = http_process(
        "--serve", str(SERVERS / "interactive.py"), "--shutdown-timeout", str(drain), *flags
    )
    long_call = call(2, "slow", {"seconds": 120})
    async with aiohttp.ClientSession() as http:
        calls = []
        if stateless:
            calls.append(http.post(server.url, json=long_call, headers=JSON))
        else:
            session = await open_session(http, server.url)
            calls.append(http.post(server.url, json=long_call, headers=session))
            query = {"request": json.dumps(long_call)}
            calls.append(http.get(f"{server.url}/sse", params=query, headers=SSE_ONLY))
        stateless = {**long_call, "params": {**long_call["params"], "_meta": MODERN_META}}
        modern_headers = {
            **JSON,
            "MCP-Protocol-Version": "2026-07-28",
            "Mcp-Method": "tools/call",
            "Mcp-Name": "slow",
        }
        calls.append(http.post(server.url, json=stateless, headers=modern_headers))
        answers = [asyncio.create_task(answer_of(each)) for each in calls]
        deadline = time.monotonic() + 20
        while sum("slow call started" in line for line in server.lines) < len(calls):
            assert time.monotonic() < deadline, server.stderr
            await asyncio.sleep(0.02)
        server.process.send_signal(signal.SIGTERM)
        signalled = time.monotonic()
        for answer in await asyncio.wait_for(asyncio.gather(*answers), 30):
            assert answer["id"] == 2 and "cancelled" in answer["error"]["message"], answer
        assert (
            time.monotonic() - signalled < drain + 8
        )  # the drain, 1 s to cancel, a loaded machine
    assert await asyncio.to_thread(server.process.wait, 10) == 0
    assert time.monotonic() - signalled < drain + 9, "the exit waited for a second drain"


async def test_while_draining_a_kept_alive_connection_gets_no_new_session(
    http_process: Start,
) -> None:
    server = http_process("--serve", str(SERVERS / "interactive.py"))
    async with aiohttp.ClientSession() as http, aiohttp.ClientSession() as other:
        session = await open_session(http, server.url)
        async with other.get(f"{server.base}/healthz") as r:  # leaves a kept-alive connection
            assert r.status == 200
        call_task = asyncio.create_task(
            http.post(server.url, json=call(2, "slow", {"seconds": 1.5}), headers=session)
        )
        await asyncio.to_thread(server.wait_for_line, "slow call started")
        server.process.send_signal(signal.SIGTERM)
        await asyncio.to_thread(server.wait_for_line, "shutting down")
        async with other.post(server.url, json=init(), headers=JSON) as refused:
            assert refused.status == 503
            assert "shutting down" in (await refused.json())["error"]["message"]
        response = await asyncio.wait_for(call_task, 10)
        assert text_of(await response.json()) == "slept 1.5 s"
    assert await asyncio.to_thread(server.process.wait, 10) == 0


async def test_stderr_lines_name_the_session_by_a_prefix_of_its_id(http_process: Start) -> None:
    """Every line about a session names it, by the first 8 characters of its id: the whole
    id is a credential for the session, and a log is read by more people than the client."""
    server = http_process("--log-level", "debug")
    async with aiohttp.ClientSession() as http:
        session = await open_session(http, server.url)
        async with http.post(server.url, json=call(2, "echo", {"message": "x"}), headers=session):
            pass
        await http.delete(server.url, headers=session)
    sid = session["Mcp-Session-Id"]
    opened = server.wait_for_line("session opened")
    ended = server.wait_for_line("session ended")
    assert f"[session {sid[:8]}]" in opened and f"[session {sid[:8]}]" in ended
    assert sid not in server.stderr and sid[:9] not in server.stderr


async def test_a_tools_failure_and_a_refusal_name_the_session(http_process: Start) -> None:
    """A tool that fails (at once, or in its own task after a wait) and a request refused
    for its session: each line names the session it is about, by the prefix of its id (the
    standard: every log line about a session)."""
    server = http_process("--serve", str(SERVERS / "interactive.py"))
    async with aiohttp.ClientSession() as http:
        session = await open_session(http, server.url)
        for index, tool in enumerate(("fails", "fails_later"), start=2):
            body = call(index, tool, {"reason": f"boom from {tool}"})
            async with http.post(server.url, json=body, headers=session) as response:
                assert (await response.json())["result"]["isError"] is True
        gone = {**session, "Mcp-Session-Id": "zz" + session["Mcp-Session-Id"][2:]}
        body = call(9, "fails", {"reason": "never"})
        async with http.post(server.url, json=body, headers=gone) as response:
            assert response.status == 404
    sid, unknown = session["Mcp-Session-Id"], gone["Mcp-Session-Id"]
    for tool in ("fails", "fails_later"):
        line = server.wait_for_line(f"tool {tool} raised boom from {tool}")
        assert f"[session {sid[:8]}] tool {tool} raised" in line, line
    refused = server.wait_for_line("refused POST")
    assert f"[session {unknown[:8]}] refused POST /mcp" in refused, refused
    assert sid not in server.stderr and unknown not in server.stderr


async def test_a_session_per_call_logs_nothing_at_info_and_an_expired_one_does(
    http_process: Start,
) -> None:
    """A client that opens and DELETEs a session per call would otherwise log two lines per
    call at the default level; a session that expires is news, and is logged."""
    server = http_process("--session-ttl", "1")
    async with aiohttp.ClientSession() as http:
        for index in range(3):
            session = await open_session(http, server.url)
            async with http.post(
                server.url, json=call(index, "echo", {"message": "x"}), headers=session
            ) as response:
                assert text_of(await response.json()) == "x"
            async with http.delete(server.url, headers=session) as response:
                assert response.status in (200, 204)
        left = await open_session(http, server.url)  # never deleted: it expires
    ended = server.wait_for_line("session ended: idle", timeout=20)
    assert f"[session {left['Mcp-Session-Id'][:8]}]" in ended
    assert "session opened" not in server.stderr, server.stderr
    assert "deleted by the client" not in server.stderr, server.stderr


async def test_file_log_has_session_ids_and_no_bearer_tokens(
    http_process: Start, tmp_path: Path
) -> None:
    log_file = tmp_path / "server.log"
    server = http_process(
        "--serve",
        str(SERVERS / "interactive.py"),
        "--bearer-token",
        "tok-123456",
        "--log-file",
        str(log_file),
    )
    async with aiohttp.ClientSession() as http:
        session = await open_session(http, server.url, Authorization="Bearer tok-123456")
        # A line that carries the token: a tool logging a header it was handed.
        body = call(2, "log_line", {"text": "Authorization: Bearer tok-123456"})
        async with http.post(server.url, json=body, headers=session) as response:
            assert text_of(await response.json()) == "logged"
    server.stop()
    text = log_file.read_text()
    sid = session["Mcp-Session-Id"]
    assert f"[session {sid[:8]}] session ended: server shutting down" in text, text
    assert sid not in text
    assert "tool says: Authorization: Bearer ****" in text, text
    assert "tok-123456" not in text
    assert "Bearer tok-123456" in server.stderr  # stderr is left as is


def test_redacting_formatter_masks_bearer_tokens() -> None:
    record = logging.LogRecord(
        "x", logging.INFO, __file__, 1, "auth: Authorization: Bearer abc.def-123, next", None, None
    )
    assert RedactBearer("%(message)s").format(record) == "auth: Authorization: Bearer ****, next"


async def test_two_tokens_from_a_file_each_own_their_sessions(
    http_process: Start, tmp_path: Path
) -> None:
    tokens = tmp_path / "tokens"
    tokens.write_text("alpha-token\n\n  beta-token  \n")
    server = http_process("--bearer-token-file", str(tokens))
    async with aiohttp.ClientSession() as http:
        alpha = await open_session(http, server.url, Authorization="Bearer alpha-token")
        beta = await open_session(http, server.url, Authorization="Bearer beta-token")
        for session in (alpha, beta):
            async with http.post(
                server.url, json=call(2, "echo", {"message": "m"}), headers=session
            ) as r:
                assert r.status == 200
        swapped = {**alpha, "Authorization": "Bearer beta-token"}
        async with http.post(
            server.url, json=call(3, "echo", {"message": "m"}), headers=swapped
        ) as r:
            assert r.status == 404
        async with http.post(
            server.url,
            json=call(4, "echo", {"message": "m"}),
            headers={**alpha, "Authorization": "Bearer gamma"},
        ) as r:
            assert r.status == 401 and "invalid_token" in r.headers["WWW-Authenticate"]


async def test_token_from_the_environment(http_process: Start) -> None:
    import os

    server = http_process(env={**os.environ, "CODEX_MCP_BEARER_TOKEN": "env-token"})
    async with aiohttp.ClientSession() as http:
        async with http.post(server.url, json=call(1, "ping", {}), headers=JSON) as r:
            assert r.status == 401
        await open_session(http, server.url, Authorization="Bearer env-token")


async def test_hung_up_streams_end_their_handlers(http_process: Start) -> None:
    """serve_http cancels a handler whose client hung up: the GET slot frees at once
    (keepalive is 15 s) and a legacy session ends with its stream."""
    server = http_process()
    async with aiohttp.ClientSession() as http:
        session = await open_session(http, server.url)
        stream = await http.get(server.url, headers={**session, **SSE_ONLY})
        legacy = await http.get(f"{server.base}/sse", headers=SSE_ONLY)
        assert (await next_event(legacy) or {}).get("event") == "endpoint"
        stream.close()
        legacy.close()
        status, live = 0, -1
        for _ in range(40):
            await asyncio.sleep(0.05)
            async with http.get(server.url, headers={**session, **SSE_ONLY}) as again:
                status = again.status
            async with http.get(f"{server.base}/readyz") as ready:
                live = (await ready.json())["sessions"]
            if status == 200 and live == 1:
                break
        assert status == 200, "the dropped GET stream still holds the session's slot"
        assert live == 1, "the legacy session outlived its stream"


# -- nginx ---------------------------------------------------------------------------------


@pytest.fixture
def nginx(tmp_path: Path) -> Iterator[Callable[..., str]]:
    """`nginx(upstream, extra_directives)`: a reverse proxy on a free loopback port,
    rewriting Host to a public-looking name; returns the proxied /mcp URL."""
    with NginxProxies(tmp_path) as proxies:

        def start(upstream: str, extra: str = "") -> str:
            return proxies.start(
                "  server {\n"
                "    listen 127.0.0.1:{port};\n"
                f"    server_name {PUBLIC_HOST};\n"
                "    location / {\n"
                f"      proxy_pass {upstream};\n"
                "      proxy_http_version 1.1;\n"
                "      proxy_set_header Host $host;\n"
                "      proxy_set_header X-Forwarded-Host $host;\n"
                f"      {extra}\n"
                "    }\n"
                "  }\n"
            )

        yield start


HOST = {"Host": PUBLIC_HOST}


@pytest.mark.slow
async def test_behind_nginx_a_session_works_end_to_end(
    http_process: Start, nginx: Callable[..., str]
) -> None:
    untrusting = nginx(http_process().base)
    server = http_process("--forwarded-hosts", PUBLIC_HOST)
    proxied = nginx(server.base)
    async with aiohttp.ClientSession() as http:
        # The Host nginx sets is not ours: refused unless the forwarded host is allowed.
        async with http.post(untrusting, json=call(1, "ping", {}), headers={**JSON, **HOST}) as r:
            assert r.status == 403
        session = await open_session(http, proxied, **HOST)
        async with http.post(
            proxied, json={"jsonrpc": "2.0", "id": 2, "method": "tools/list"}, headers=session
        ) as r:
            assert {t["name"] for t in (await r.json())["result"]["tools"]} >= {"echo", "sleep"}
        async with http.post(
            proxied, json=call(3, "echo", {"message": "via nginx"}), headers=session
        ) as r:
            assert text_of(await r.json()) == "via nginx"
        single = f"{proxied}/sse?request=" + json.dumps(call(4, "echo", {"message": "one"}))
        async with http.get(single, headers=HOST) as r:
            assert [text_of(m) for m in await messages_of(r)] == ["one"]
        evil = {**session, "Origin": "https://evil.example"}
        async with http.post(proxied, json=call(5, "echo", {"message": "x"}), headers=evil) as r:
            assert r.status == 403
        async with http.delete(proxied, headers=session) as r:
            assert r.status == 200
        async with http.post(proxied, json=call(6, "echo", {"message": "x"}), headers=session) as r:
            assert r.status == 404


async def _progress_arrivals(http: aiohttp.ClientSession, url: str, seconds: int) -> list[float]:
    """Seconds before the final response at which each progress notification arrived."""
    session = await open_session(http, url, **HOST)
    body = call(2, "sleep", {"seconds": seconds}, {"progressToken": "t"})
    arrivals: list[tuple[float, dict[str, Any]]] = []
    async with http.post(url, json=body, headers=session) as response:
        assert response.content_type == "text/event-stream"
        assert "X-Accel-Buffering" not in response.headers  # nginx consumes it
        while (event := await next_event(response, timeout=seconds + 5)) is not None:
            if event.get("data"):
                arrivals.append((time.monotonic(), json.loads(event["data"])))
    final = [t for t, m in arrivals if m.get("id") == 2]
    assert len(final) == 1, arrivals
    return [final[0] - t for t, m in arrivals if m.get("method") == "notifications/progress"]


#: Compression of the event stream: nginx then holds events back unless proxy buffering is off.
GZIP = "gzip on; gzip_types text/event-stream; gzip_proxied any; gzip_min_length 0;"


@pytest.mark.slow
async def test_behind_nginx_progress_arrives_while_the_call_runs(
    http_process: Start, nginx: Callable[..., str]
) -> None:
    """No proxy_buffering directive: our X-Accel-Buffering: no header alone must do."""
    server = http_process("--forwarded-hosts", PUBLIC_HOST)
    async with aiohttp.ClientSession() as http:
        before_final = await _progress_arrivals(http, nginx(server.base), 3)
    # sleep 3 reports at 1 s, 2 s and 3 s; the last comes with the result.
    assert len(before_final) == 3
    assert before_final[0] > 1.5 and before_final[1] > 0.6, before_final


@pytest.mark.slow
async def test_behind_nginx_compressing_progress_still_arrives_while_the_call_runs(
    http_process: Start, nginx: Callable[..., str]
) -> None:
    """With gzip on, nginx buffers a proxied stream (see the control below) unless our
    X-Accel-Buffering: no header turns proxy buffering off for it."""
    server = http_process("--forwarded-hosts", PUBLIC_HOST)
    async with aiohttp.ClientSession() as http:
        before_final = await _progress_arrivals(http, nginx(server.base, GZIP), 2)
    assert len(before_final) == 2
    assert before_final[0] > 0.6, before_final


async def test_behind_nginx_ignoring_our_header_the_progress_is_held_back(
    http_process: Start, nginx: Callable[..., str]
) -> None:
    """The control: the same gzip config with nginx told to ignore X-Accel-Buffering holds
    every event back to the end, so the two tests above can fail and the header is what
    makes them pass. (Without gzip, nginx 1.22 streams promptly even when buffering.)"""
    server = http_process("--forwarded-hosts", PUBLIC_HOST)
    proxied = nginx(server.base, f"proxy_ignore_headers X-Accel-Buffering; {GZIP}")
    async with aiohttp.ClientSession() as http:
        before_final = await _progress_arrivals(http, proxied, 2)
    assert len(before_final) == 2
    assert max(before_final) < 0.3, before_final


async def _long_silent_call(http: aiohttp.ClientSession, url: str) -> tuple[int, str]:
    session = await open_session(http, url, **HOST)
    async with http.post(url, json=call(9, "sleep", {"seconds": 2.5}), headers=session) as r:
        return r.status, await r.text()


@pytest.mark.slow
async def test_behind_nginx_keepalives_carry_a_long_silent_call_past_its_read_timeout(
    http_process: Start, nginx: Callable[..., str]
) -> None:
    server = http_process("--forwarded-hosts", PUBLIC_HOST, "--keepalive-interval", "0.4")
    proxied = nginx(server.base, "proxy_read_timeout 1s;")
    async with aiohttp.ClientSession() as http:
        status, body = await _long_silent_call(http, proxied)
    assert status == 200
    assert "slept 2.5 s" in body and ": keepalive" in body


async def test_behind_nginx_without_keepalives_the_read_timeout_cuts_the_call(
    http_process: Start, nginx: Callable[..., str]
) -> None:
    """The control: keepalives rarer than nginx's read timeout, and nginx gives up (504)."""
    server = http_process("--forwarded-hosts", PUBLIC_HOST, "--keepalive-interval", "30")
    proxied = nginx(server.base, "proxy_read_timeout 1s;")
    async with aiohttp.ClientSession() as http:
        status, _ = await _long_silent_call(http, proxied)
    assert status == 504


@pytest.mark.parametrize("host", ["127.0.0.1", "::1"])
@pytest.mark.slow
async def test_listening_on_an_address_starts_no_thread(host: str, http_process: Start) -> None:
    """An address is bound as given, not resolved: uvloop resolves even 127.0.0.1 on
    libuv's thread pool, four threads started before the first answer (issue 23)."""
    if host == "::1" and not socket.has_ipv6:
        pytest.skip("no IPv6 here")
    server = http_process("--host", host)
    async with aiohttp.ClientSession() as http:
        session = await open_session(http, server.url)
        async with http.post(
            server.url, json=call(2, "echo", {"message": "hi"}), headers=session
        ) as response:
            assert text_of(await response.json()).endswith("hi")
    threads = _thread_names(server.pid)
    assert len(threads) == 1, threads  # the main thread alone (not libuv-worker x4)


def _thread_names(pid: int) -> list[str]:
    return [(task / "comm").read_text().strip() for task in Path(f"/proc/{pid}/task").iterdir()]
