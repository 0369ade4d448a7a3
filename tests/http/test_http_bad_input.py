"""Whatever a client sends in its headers and query, the answer is a 4xx, never a 500;
and the Host header is parsed strictly. Raw sockets to the app on 127.0.0.1, so odd
bytes reach the server as sent."""

from __future__ import annotations

import gzip
import json
import zlib
from urllib.parse import quote

import pytest
from raw_http import INIT_BODY, initialize, request_bytes, send
from served import served

JSON = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
PING = b'{"jsonrpc":"2.0","id":7,"method":"ping"}'
SINGLE_PING = "/mcp/sse?request=" + quote('{"jsonrpc":"2.0","id":1,"method":"ping"}')


def session_headers(sid: str) -> dict[str, str | bytes]:
    return {**JSON, "Mcp-Session-Id": sid, "MCP-Protocol-Version": "2025-06-18"}


async def test_a_malformed_origin_is_400() -> None:
    async with served() as port:
        for origin in [
            "http://[",
            "http://[::1",
            "http://localhost:99999",
            "http://a b",
            "localhost",
        ]:
            reply = await send(
                port, request_bytes("POST", "/mcp", {**JSON, "Origin": origin}, INIT_BODY, port)
            )
            assert reply.status == 400, (origin, reply)
            assert "Origin" in reply.json()["error"]["message"]
        reply = await send(
            port,
            request_bytes("POST", "/mcp", {**JSON, "Origin": "http://[::1]:3000"}, INIT_BODY, port),
        )
        assert reply.status == 200  # a loopback origin still passes


@pytest.mark.parametrize("event_id", ["0_²", "0_" + "9" * 5000, "0_-1", "٣_1", "stream", "0_1_2"])
async def test_a_last_event_id_we_did_not_issue_is_400(event_id: str) -> None:
    async with served() as port:
        sid = await initialize(port)
        headers = {
            **session_headers(sid),
            "Accept": "text/event-stream",
            "Last-Event-ID": event_id.encode(),
        }
        reply = await send(port, request_bytes("GET", "/mcp", headers, port=port))
        assert reply.status == 400, reply
        assert reply.json()["error"]["code"] == -32600


@pytest.mark.parametrize("encoding", ["gzip", "deflate"])
@pytest.mark.parametrize("route", ["/mcp", "/messages"])
async def test_a_body_that_does_not_match_its_content_encoding_is_400(
    encoding: str, route: str
) -> None:
    async with served() as port:
        sid = await initialize(port)
        target = f"/messages?session_id={sid}" if route == "/messages" else "/mcp"
        for body in [b"not compressed", b"\x1f\x8b\x08\x00broken gzip", zlib.compress(PING)[:-4]]:
            headers = {**session_headers(sid), "Content-Encoding": encoding}
            reply = await send(port, request_bytes("POST", target, headers, body, port))
            assert reply.status == 400, (body, reply)
            assert "Content-Encoding" in reply.json()["error"]["message"]
        # A body that does match is read as usual.
        headers = {**session_headers(sid), "Content-Encoding": "gzip"}
        reply = await send(port, request_bytes("POST", "/mcp", headers, gzip.compress(PING), port))
        assert reply.status == 200 and reply.json() == {"jsonrpc": "2.0", "id": 7, "result": {}}


async def test_a_bearer_token_that_is_not_utf8_is_401() -> None:
    async with served(bearer_tokens=["secret"]) as port:
        for token in [b"\xff\xfe", b"secr\xc3\x28t", b"\xed\xa0\x80"]:
            headers = {**JSON, "Authorization": b"Bearer " + token}
            reply = await send(port, request_bytes("POST", "/mcp", headers, INIT_BODY, port))
            assert reply.status == 401, (token, reply)
        headers = {**JSON, "Authorization": "Bearer secret"}
        assert (
            await send(port, request_bytes("POST", "/mcp", headers, INIT_BODY, port))
        ).status == 200


async def test_single_event_with_an_unsupported_protocol_version_is_400() -> None:
    async with served() as port:
        for version in ["1999-01-01", "\xff", "2025-06-18x"]:
            headers = {"MCP-Protocol-Version": version.encode("latin-1")}
            reply = await send(port, request_bytes("GET", SINGLE_PING, headers, port=port))
            assert reply.status == 400, (version, reply)


ODD_VALUES = [
    b"\xff",
    b"\xc3\x28",
    b"\xed\xa0\x80",
    "²".encode(),
    b"%",
    b"a" * 4000,
    b"9" * 5000,
    b"0_" + b"9" * 5000,
    b"[",
    b"http://[",
    b"-1",
    b"*",
]
HEADERS = [
    "Origin",
    "Host",
    "Mcp-Session-Id",
    "MCP-Protocol-Version",
    "Last-Event-ID",
    "Authorization",
    "X-Forwarded-Host",
    "Accept",
    "Content-Type",
    "Content-Encoding",
    "X-MCP-POST-STREAM",
]
QUERY_VALUES = [
    "%ff",
    "%ed%a0%80",
    "%00",
    "%",
    quote('"\\ud800"'),
    quote('{"id":[1]}'),
    "1&request=2",
]


async def test_no_odd_header_or_query_value_gets_a_5xx() -> None:
    async with served(forwarded_hosts=["proxy.example"]) as port:
        sid = await initialize(port)
        routes = [
            ("POST", "/mcp", session_headers(sid), PING),
            ("GET", "/mcp", {**session_headers(sid), "Accept": "text/event-stream"}, b""),
            ("DELETE", "/mcp", session_headers(sid), b""),
            ("GET", SINGLE_PING, {}, b""),
            ("POST", f"/messages?session_id={sid}", JSON, PING),
        ]
        answered: dict[int, int] = {}
        for name in HEADERS:
            for value in ODD_VALUES:
                for method, target, base, body in routes:
                    if method == "DELETE" and name != "Mcp-Session-Id":
                        continue  # keep the session for the other cases
                    request = request_bytes(method, target, {**base, name: value}, body, port)
                    reply = await send(port, request)
                    assert reply.status < 500, (name, value[:20], method, target, reply)
                    answered[reply.status] = answered.get(reply.status, 0) + 1
        for value in QUERY_VALUES:
            for target in [f"/mcp/sse?request={value}", f"/messages?session_id={value}"]:
                method = "GET" if target.startswith("/mcp/sse") else "POST"
                for extra in [{}, {"Mcp-Session-Id": sid}, {"MCP-Protocol-Version": value}]:
                    reply = await send(
                        port, request_bytes(method, target, {**JSON, **extra}, PING, port)
                    )
                    assert reply.status < 500, (target, extra, reply)
        assert set(answered) > {200, 400}, answered  # the sweep reached the handlers
        healthz = await send(port, request_bytes("GET", "/healthz", port=port))
        assert healthz.status == 200 and json.loads(healthz.body) == {"status": "ok"}


ALLOWED = 200
MALFORMED = 400
FORBIDDEN = 403


@pytest.mark.parametrize(
    ("host", "status"),
    [
        ("127.0.0.1:18670@evil.com", MALFORMED),
        ("127.0.0.1@evil.com", MALFORMED),
        ("127.0.0.1:18670/evil.com", MALFORMED),
        ("localhost:80:80", MALFORMED),
        ("127.0.0.1:99999", MALFORMED),
        ("127.0.0.1:http", MALFORMED),
        ("[::1", MALFORMED),
        ("[::1]x", MALFORMED),
        ("[::1]:", MALFORMED),
        ("[not:an:ip]", MALFORMED),
        ("127.0.0.1 evil.com", MALFORMED),
        ("", MALFORMED),
        ("127.0.0.1.evil.com", FORBIDDEN),
        ("evil.com", FORBIDDEN),
        ("localhost.evil.com:80", FORBIDDEN),
        ("[::2]", FORBIDDEN),
        ("127.0.0.1", ALLOWED),
        ("127.0.0.1:18670", ALLOWED),
        ("LocalHost:1", ALLOWED),
        ("[::1]", ALLOWED),
        ("[::1]:8000", ALLOWED),
    ],
)
async def test_the_host_header_is_parsed_strictly(host: str, status: int) -> None:
    async with served() as port:
        reply = await send(
            port, request_bytes("POST", "/mcp", {**JSON, "Host": host}, INIT_BODY, port)
        )
        assert reply.status == status, reply
        if status != ALLOWED:
            assert reply.json()["error"]["code"] == -32600


async def test_allowed_hosts_match_the_name_and_the_port_if_given() -> None:
    async with served(allowed_hosts=["tools.example", "api.example:8443"]) as port:
        cases = {
            "tools.example": ALLOWED,
            "tools.example:1234": ALLOWED,
            "api.example:8443": ALLOWED,
            "api.example:8444": FORBIDDEN,
            "api.example": FORBIDDEN,
            "tools.example@api.example:8443": MALFORMED,
            "localhost": FORBIDDEN,  # an explicit list replaces the loopback names
        }
        for host, status in cases.items():
            reply = await send(
                port, request_bytes("POST", "/mcp", {**JSON, "Host": host}, INIT_BODY, port)
            )
            assert reply.status == status, (host, reply)


async def test_a_forwarded_host_with_junk_is_not_trusted() -> None:
    async with served(forwarded_hosts=["public.example"]) as port:
        proxied = {**JSON, "Host": "backend:8000"}
        good = {**proxied, "X-Forwarded-Host": "public.example"}
        assert (
            await send(port, request_bytes("POST", "/mcp", good, INIT_BODY, port))
        ).status == 200
        for forwarded in ["public.example@evil.com", "evil.com", "public.example.evil.com", "[bad"]:
            headers = {**proxied, "X-Forwarded-Host": forwarded}
            reply = await send(port, request_bytes("POST", "/mcp", headers, INIT_BODY, port))
            assert reply.status in (MALFORMED, FORBIDDEN), (forwarded, reply)


@pytest.mark.parametrize(
    ("target", "status"),
    [
        ("http://evil.com/mcp", FORBIDDEN),
        ("http://evil.com:80/mcp?x=1", FORBIDDEN),
        ("https://127.0.0.1.evil.com/mcp", FORBIDDEN),
        ("http://127.0.0.1:8000@evil.com/mcp", MALFORMED),
        ("http://user@127.0.0.1/mcp", MALFORMED),
        ("http://127.0.0.1:8000/mcp", ALLOWED),
        ("http://[::1]/mcp", ALLOWED),
    ],
)
async def test_an_absolute_form_target_names_an_allowed_host_too(target: str, status: int) -> None:
    """`POST http://evil.com/mcp` with a loopback Host: the target's host is the one a
    server goes by (RFC 9112), so a rebinding page cannot slip past the Host check."""
    async with served() as port:
        reply = await send(port, request_bytes("POST", target, JSON, INIT_BODY, port))
        assert reply.status == status, reply
        if status != ALLOWED:
            assert "request target host" in reply.json()["error"]["message"].lower()
            stream = target.replace("/mcp", "/sse")  # every route, not just /mcp
            reply = await send(
                port, request_bytes("GET", stream, {"Accept": "text/event-stream"}, port=port)
            )
            assert reply.status == status, reply
