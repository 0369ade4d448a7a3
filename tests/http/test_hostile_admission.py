"""Hostile callers at every entry of `codex-mcp-http`: each entry to the same capability
goes through the same admission (credential, scope, the operator scope, session), and
nothing a caller sends can forge or garble a log line (specs/isolation.md, "HTTP entries,
status page, metrics and logs").

Entries: POST /mcp (one request, a batch, a 2026-07-28 request), GET /mcp/sse?request=
(with and without a session), the 2024-11-05 transport's POST /messages, the status page
and /metrics. Real processes on 127.0.0.1: the server, and oauth2-mock-server minting
the tokens (tests/http/oauth_helpers.py)."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import quote

import aiohttp
import pytest
from http_helpers import JSON, call, init, notification, open_session
from http_process import HttpProcess
from multidict import CIMultiDict
from oauth_helpers import AuthorizationServer
from raw_http import request_bytes, send
from support.processes import free_port

STATIC = "static-operator-token"
#: The operator scope the status page and /metrics want of an OAuth token (the default).
OPERATOR = "mcp.operator"
STATELESS = "2026-07-28"
ENVELOPE = {
    "io.modelcontextprotocol/protocolVersion": STATELESS,
    "io.modelcontextprotocol/clientCapabilities": {},
    "io.modelcontextprotocol/clientInfo": {"name": "hostile", "version": "1"},
}


def echo_call(request_id: int = 7) -> dict[str, Any]:
    return call(request_id, "echo", {"message": "should not run"})


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


@dataclass
class Reply:
    status: int
    body: str
    headers: dict[str, str] = field(default_factory=dict)


async def legacy_session(http: aiohttp.ClientSession, base: str, auth: dict[str, str]) -> str:
    """Opens a 2024-11-05 stream and returns its session id (the stream stays open on
    `http` until the test's client closes)."""
    response = await http.get(f"{base}/sse", headers={**auth, "Accept": "text/event-stream"})
    assert response.status == 200, await response.text()
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        line = (await asyncio.wait_for(response.content.readline(), 10)).decode()
        if line.startswith("data: ") and "session_id=" in line:
            return line.split("session_id=", 1)[1].strip()
    raise AssertionError("no endpoint event")


async def single_event_body(response: aiohttp.ClientResponse) -> str:
    if response.content_type == "text/event-stream":
        return (await asyncio.wait_for(response.content.read(), 10)).decode()
    return await response.text()


class Entries:
    """Sends one tool call (or page fetch) through a named entry with the given headers."""

    MESSAGE_ENTRIES = (
        "post",
        "batch",
        "single-event",
        "single-event+session",
        "stateless",
        "legacy",
    )
    OPERATOR_ENTRIES = ("status-page", "metrics")

    def __init__(self, http: aiohttp.ClientSession, server: HttpProcess) -> None:
        self.http = http
        self.server = server

    async def send(
        self,
        entry: str,
        auth: dict[str, str],
        session_for: dict[str, str] | None = None,
        session_id: str | None = None,
    ) -> Reply:
        """`session_for`: whose credential opens the session an entry that takes one uses
        (default: the same `auth`); `session_id`: use this id instead (unknown, replayed)."""
        http, url, base = self.http, self.server.url, self.server.base
        opener = auth if session_for is None else session_for
        message = echo_call()
        if entry == "post":
            headers = await self._session(opener, session_id)
            async with http.post(url, json=message, headers={**headers, **auth}) as r:
                return Reply(r.status, await r.text(), dict(r.headers))
        if entry == "batch":  # batches are 2025-03-26's
            headers = await self._session(opener, session_id, "2025-03-26")
            async with http.post(url, json=[message], headers={**headers, **auth}) as r:
                return Reply(r.status, await r.text(), dict(r.headers))
        if entry in ("single-event", "single-event+session"):
            target = f"{url}/sse?request={quote(json.dumps(message))}"
            headers = {"Accept": "text/event-stream", **auth}
            if entry == "single-event+session":
                session = await self._session(opener, session_id)
                headers["Mcp-Session-Id"] = session["Mcp-Session-Id"]
            async with http.get(target, headers=headers) as r:
                return Reply(r.status, await single_event_body(r), dict(r.headers))
        if entry == "stateless":
            stateless = {**message, "params": {**message["params"], "_meta": ENVELOPE}}
            headers = {
                **JSON,
                **auth,
                "MCP-Protocol-Version": STATELESS,
                "Mcp-Method": "tools/call",
                "Mcp-Name": "echo",
            }
            async with http.post(url, json=stateless, headers=headers) as r:
                return Reply(r.status, await r.text(), dict(r.headers))
        if entry == "legacy":
            sid = session_id or await legacy_session(http, base, opener)
            async with http.post(
                f"{base}/messages?session_id={sid}", json=message, headers={**JSON, **auth}
            ) as r:
                return Reply(r.status, await r.text(), dict(r.headers))
        if entry == "status-page":
            async with http.get(f"{base}/", headers=auth) as r:
                return Reply(r.status, await r.text(), dict(r.headers))
        if entry == "metrics":
            async with http.get(f"{base}/metrics", headers=auth) as r:
                return Reply(r.status, await r.text(), dict(r.headers))
        raise AssertionError(entry)

    async def _session(
        self, opener: dict[str, str], session_id: str | None, version: str = "2025-06-18"
    ) -> dict[str, str]:
        if session_id is not None:
            return {**JSON, "Mcp-Session-Id": session_id, "MCP-Protocol-Version": version}
        if not opener:  # nobody can open one: name a made-up session
            return {**JSON, "Mcp-Session-Id": "made-up", "MCP-Protocol-Version": version}
        session = await open_session(self.http, self.server.url, version, **opener)
        session.pop("Authorization", None)  # the request itself says who sends it
        return session


# -- OAuth: one server, tokens from a real authorization server ------------------------


@dataclass
class Tokens:
    full: str  # mcp, admin (echo's scope) and the operator scope
    user: str  # mcp only: no echo, no status page
    other_user: str  # another subject, all scopes
    operator: str  # the operator scope only
    foreign: str  # another resource's token


@pytest.fixture(scope="module")
def audit_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("audit") / "audit.jsonl"


@pytest.fixture(scope="module")
def oauth_server(
    authorization_server: AuthorizationServer, audit_file: Path
) -> Iterator[HttpProcess]:
    server = HttpProcess(
        "--oauth-issuer",
        authorization_server.issuer,
        "--oauth-scope",
        "mcp",
        "--oauth-tool-scope",
        "echo=admin",
        "--bearer-token",
        STATIC,
        "--audit-log",
        str(audit_file),
        # Wrong tokens on every entry from one address, on purpose: the bound they would
        # reach is tests/http/test_hostile_guessing.py's to show.
        "--auth-failures-per-minute",
        "10000",
    )
    yield server
    server.stop()


@pytest.fixture
async def tokens(authorization_server: AuthorizationServer, oauth_server: HttpProcess) -> Tokens:
    issuer, url = authorization_server, oauth_server.url
    return Tokens(
        full=await issuer.token(audience=url, scope=f"mcp admin {OPERATOR}"),
        user=await issuer.token(audience=url, scope="mcp"),
        other_user=await issuer.token("client-b", audience=url, scope=f"mcp admin {OPERATOR}"),
        operator=await issuer.token(audience=url, scope=OPERATOR),
        foreign=await issuer.token(audience="http://127.0.0.1:1/mcp", scope="mcp admin"),
    )


@pytest.fixture
async def entries(oauth_server: HttpProcess) -> AsyncIterator[Entries]:
    async with aiohttp.ClientSession() as http:
        yield Entries(http, oauth_server)


ALL_ENTRIES = Entries.MESSAGE_ENTRIES + Entries.OPERATOR_ENTRIES


@pytest.mark.interop
@pytest.mark.parametrize("entry", ALL_ENTRIES)
async def test_no_credential_is_refused_on_every_entry(entries: Entries, entry: str) -> None:
    reply = await entries.send(entry, {}, session_for=bearer(STATIC))
    assert reply.status == 401, reply
    assert "should not run" not in reply.body


@pytest.mark.interop
@pytest.mark.parametrize("entry", ALL_ENTRIES)
@pytest.mark.parametrize("wrong", ["not-a-jwt", "foreign"])
async def test_a_wrong_credential_is_refused_on_every_entry(
    entries: Entries, tokens: Tokens, entry: str, wrong: str
) -> None:
    token = tokens.foreign if wrong == "foreign" else wrong
    reply = await entries.send(entry, bearer(token), session_for=bearer(tokens.full))
    assert reply.status == 401, reply
    assert "should not run" not in reply.body


@pytest.mark.interop
@pytest.mark.parametrize("entry", Entries.MESSAGE_ENTRIES)
async def test_a_token_without_the_tools_scope_cannot_call_it_on_any_entry(
    entries: Entries, tokens: Tokens, entry: str
) -> None:
    reply = await entries.send(entry, bearer(tokens.user))
    assert reply.status == 403, reply
    assert "admin" in reply.headers.get("WWW-Authenticate", ""), reply
    assert "should not run" not in reply.body
    if entry != "batch":  # a batch's refusal is about the whole batch
        assert json.loads(reply.body)["id"] == 7, reply


@pytest.mark.interop
@pytest.mark.parametrize("entry", Entries.MESSAGE_ENTRIES)
async def test_a_token_with_the_tools_scope_calls_it_on_every_entry(
    entries: Entries, tokens: Tokens, entry: str
) -> None:
    """The refusals above are about the scope, not the entry: the same call with the
    scope is answered (legacy: accepted, its answer goes on the stream)."""
    reply = await entries.send(entry, bearer(tokens.full))
    assert reply.status == (202 if entry == "legacy" else 200), reply
    if entry != "legacy":
        assert "should not run" in reply.body, reply


@pytest.mark.interop
@pytest.mark.parametrize("entry", Entries.OPERATOR_ENTRIES)
async def test_the_status_page_and_metrics_want_the_operator_scope(
    entries: Entries, tokens: Tokens, entry: str
) -> None:
    for token in (tokens.user, tokens.foreign):
        refused = await entries.send(entry, bearer(token))
        assert refused.status in (401, 403), refused
        assert "codex-mcp" not in refused.body and "session" not in refused.body.lower()
    refused = await entries.send(entry, bearer(tokens.user))
    assert refused.status == 403
    assert OPERATOR in refused.headers.get("WWW-Authenticate", ""), refused
    for token in (tokens.operator, tokens.full, STATIC):  # a static token works as before
        shown = await entries.send(entry, bearer(token))
        assert shown.status == 200, (token, shown)


@pytest.mark.interop
async def test_the_operator_scope_alone_does_not_open_mcp(entries: Entries, tokens: Tokens) -> None:
    async with entries.http.post(
        entries.server.url, json=init(), headers={**JSON, **bearer(tokens.operator)}
    ) as reply:
        assert reply.status == 403
        assert "mcp" in reply.headers.get("WWW-Authenticate", "")


@pytest.mark.interop
@pytest.mark.parametrize("entry", ["post", "batch", "single-event+session", "legacy"])
@pytest.mark.parametrize("whose", ["unknown", "another caller's"])
async def test_an_unknown_or_another_callers_session_is_not_found(
    entries: Entries, tokens: Tokens, entry: str, whose: str
) -> None:
    if whose == "unknown":
        session_id = "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"  # replayed after its end, or guessed
        reply = await entries.send(entry, bearer(tokens.full), session_id=session_id)
    else:  # the other subject opened it; this one presents it
        reply = await entries.send(
            entry, bearer(tokens.full), session_for=bearer(tokens.other_user)
        )
    assert reply.status == 404, reply
    assert "should not run" not in reply.body


@pytest.mark.interop
async def test_a_session_ended_then_replayed_is_not_found(entries: Entries, tokens: Tokens) -> None:
    http, url = entries.http, entries.server.url
    session = await open_session(http, url, **bearer(tokens.full))
    async with http.delete(url, headers=session) as reply:
        assert reply.status == 200
    for entry in ("post", "single-event+session"):
        replayed = await entries.send(
            entry, bearer(tokens.full), session_id=session["Mcp-Session-Id"]
        )
        assert replayed.status == 404, (entry, replayed)


def audit_lines(path: Path) -> list[dict[str, Any]]:
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


@pytest.mark.interop
@pytest.mark.parametrize("entry", Entries.MESSAGE_ENTRIES)
async def test_every_entrys_tool_call_is_audited_with_its_caller(
    entries: Entries, tokens: Tokens, audit_file: Path, entry: str
) -> None:
    before = len(audit_lines(audit_file))
    reply = await entries.send(entry, bearer(tokens.full))
    assert reply.status in (200, 202), reply
    deadline = time.monotonic() + 10
    while True:
        calls = [
            line
            for line in audit_lines(audit_file)[before:]
            if line["event"] == "tool_call" and line["tool"] == "echo"
        ]
        if calls:
            break
        assert time.monotonic() < deadline, audit_lines(audit_file)
        await asyncio.sleep(0.05)
    assert calls[0]["principal"] is not None, calls


# -- logs: nothing from outside reaches them raw ----------------------------------------


FORGED = "2026-01-01 00:00:00,000 ERROR codex_mcp: FORGED"


@pytest.fixture(scope="module")
def static_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[HttpProcess]:
    audit = tmp_path_factory.mktemp("audit") / "refused.jsonl"
    server = HttpProcess("--bearer-token", STATIC, "--audit-log", str(audit), "--log-level", "info")
    server.audit = audit  # type: ignore[attr-defined]
    yield server
    server.stop()


def port_of(server: HttpProcess) -> int:
    return int(server.base.rsplit(":", 1)[1])


HOSTILE_TARGETS = [
    "/mcp%0a" + quote(FORGED),
    "/mcp%0d%0a" + quote(FORGED),
    "/mcp%1b[2J%1b[31mred",
    "/mcp%e2%80%a8" + quote(FORGED),  # U+2028: a line break to some readers
    "/messages?session_id=%0a" + quote(FORGED),
    "/messages?session_id=%1b[2J%1b]0;title%07",
]


def wait_for_refusals(server: HttpProcess, count: int, timeout: float = 10) -> list[str]:
    deadline = time.monotonic() + timeout
    while True:
        lines = [line for line in list(server.lines) if "codex_mcp.http.refused" in line]
        if len(lines) >= count:
            return lines
        assert time.monotonic() < deadline, server.stderr
        time.sleep(0.02)


def assert_clean(server: HttpProcess) -> None:
    text = server.stderr
    assert not any(each.startswith(FORGED[:23]) for each in text.splitlines()), text
    for garbling in ("\x1b", "\x07", "\x7f", "\r", "\u2028", "\u0085"):
        assert garbling not in text, repr(text)


@pytest.mark.parametrize("target", HOSTILE_TARGETS)
async def test_a_refused_requests_path_cannot_forge_or_garble_a_log_line(
    static_server: HttpProcess, target: str
) -> None:
    port = port_of(static_server)
    before = len(wait_for_refusals(static_server, 0))
    reply = await send(
        port,
        request_bytes(
            "POST", target, {"Content-Type": "application/json"}, json.dumps(init()).encode(), port
        ),
    )
    assert reply.status == 401, reply
    line = wait_for_refusals(static_server, before + 1)[before]
    assert "401 missing bearer token" in line, line
    assert_clean(static_server)
    audit = static_server.audit  # type: ignore[attr-defined]
    for each in audit.read_text().splitlines():
        json.loads(each)  # one JSON object a line, whatever the path held


async def test_a_hostile_session_header_cannot_garble_a_log_line(
    static_server: HttpProcess,
) -> None:
    """A session id given in a header reaches the refusal's session tag: escaped too (or
    the header is refused before anything is logged)."""
    port = port_of(static_server)
    before = len(wait_for_refusals(static_server, 0))
    reply = await send(
        port,
        request_bytes(
            "POST",
            "/mcp",
            {
                "Content-Type": "application/json",
                "Authorization": f"Bearer {STATIC}",
                "Mcp-Session-Id": b"\x1b[2J\x7f\x1b[1Ax",
            },
            json.dumps(echo_call()).encode(),
            port,
        ),
    )
    assert reply.status in (400, 404), reply
    if reply.status == 404:
        wait_for_refusals(static_server, before + 1)
    assert_clean(static_server)


# -- 2026-07-28 routing headers: each given once ---------------------------------------


@pytest.mark.parametrize("order", [("echo", "add"), ("add", "echo")])
async def test_two_differing_mcp_name_headers_are_refused(
    static_server: HttpProcess, order: tuple[str, str]
) -> None:
    message = echo_call()
    message["params"]["_meta"] = ENVELOPE
    headers = CIMultiDict(
        {
            **JSON,
            **bearer(STATIC),
            "MCP-Protocol-Version": STATELESS,
            "Mcp-Method": "tools/call",
        }
    )
    for name in order:
        headers.add("Mcp-Name", name)
    async with (
        aiohttp.ClientSession() as http,
        http.post(static_server.url, json=message, headers=headers) as reply,
    ):
        body = await reply.json()
    assert reply.status == 400, body
    assert body["id"] == 7 and body["error"]["code"] == -32020, body
    assert "Mcp-Name" in body["error"]["message"], body


async def test_two_mcp_method_headers_are_refused(static_server: HttpProcess) -> None:
    message = {**echo_call(), "params": {"name": "echo", "arguments": {}, "_meta": ENVELOPE}}
    headers = CIMultiDict({**JSON, **bearer(STATIC), "MCP-Protocol-Version": STATELESS})
    headers.add("Mcp-Method", "tools/call")
    headers.add("Mcp-Method", "tools/call")
    headers.add("Mcp-Name", "echo")
    async with (
        aiohttp.ClientSession() as http,
        http.post(static_server.url, json=message, headers=headers) as reply,
    ):
        body = await reply.json()
    assert reply.status == 400 and body["error"]["code"] == -32020, body


# -- the session store unreachable: the refusal names the request ----------------------


async def test_a_redis_down_refusal_carries_the_requests_id() -> None:
    pytest.importorskip("redis", reason="the Redis client is not installed")
    server = HttpProcess("--redis-url", f"redis://127.0.0.1:{free_port()}/0")
    try:
        async with aiohttp.ClientSession() as http:
            for message, expected in [
                (echo_call(41), 41),
                (init(request_id="init-7"), "init-7"),
                ([echo_call(3)], None),  # a batch: no one id
                (notification("notifications/initialized"), None),
            ]:
                async with http.post(server.url, json=message, headers=JSON) as reply:
                    body = await reply.json()
                assert reply.status == 503, body
                assert body["id"] == expected, body
            async with http.post(server.url, data=b"{not json", headers=JSON) as reply:
                assert reply.status == 503
                assert (await reply.json())["id"] is None
    finally:
        server.stop()


async def test_a_stateless_servers_calls_are_audited_with_their_caller(tmp_path: Path) -> None:
    """`--stateless` runs each POST in a throwaway session, which carries the caller too."""
    audit = tmp_path / "audit.jsonl"
    server = HttpProcess("--stateless", "--bearer-token", STATIC, "--audit-log", str(audit))
    try:
        async with (
            aiohttp.ClientSession() as http,
            http.post(server.url, json=echo_call(), headers={**JSON, **bearer(STATIC)}) as reply,
        ):
            assert reply.status == 200, await reply.text()
        deadline = time.monotonic() + 10
        while not (calls := [line for line in audit_lines(audit) if line["tool"] == "echo"]):
            assert time.monotonic() < deadline, audit_lines(audit)
            await asyncio.sleep(0.05)
        assert calls[0]["principal"] is not None, calls
    finally:
        server.stop()
