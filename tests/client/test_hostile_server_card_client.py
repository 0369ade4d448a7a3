"""`fetch_server_card` against hostile hosts (real aiohttp servers on 127.0.0.1): what comes
back is read within bounds, only from the origin asked, and anything that is not a card is
a ServerCardError saying why (specs/http.md, "The server card")."""

from __future__ import annotations

import asyncio
import re
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import orjson
import pytest
from aiohttp import web
from aiohttp.test_utils import TestServer
from codex_mcp.client import ServerCardError, fetch_server_card, server_card_url
from codex_mcp.core.server_card import MEDIA_TYPE, SCHEMA_URL

GOOD: dict[str, Any] = {
    "$schema": SCHEMA_URL,
    "name": "com.example/weather",
    "version": "1.0.0",
    "description": "Weather.",
    "remotes": [{"type": "streamable-http", "url": "https://example.com/mcp"}],
}

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


@pytest.fixture
async def host() -> AsyncIterator[Callable[[Handler], Awaitable[TestServer]]]:
    started: list[TestServer] = []

    async def start(handler: Handler) -> TestServer:
        app = web.Application()
        app.router.add_route("*", "/{tail:.*}", handler)
        server = TestServer(app, host="127.0.0.1")
        await server.start_server()
        started.append(server)
        return server

    yield start
    for server in started:
        await server.close()


def card_reply(document: Any, content_type: str = MEDIA_TYPE) -> Handler:
    async def handler(request: web.Request) -> web.Response:
        return web.Response(body=orjson.dumps(document), content_type=content_type)

    return handler


async def test_a_good_card_is_read_and_the_media_type_asked(host: Any) -> None:
    asked: list[str] = []

    async def handler(request: web.Request) -> web.Response:
        asked.append(request.headers.get("Accept", ""))
        return web.Response(body=orjson.dumps(GOOD), content_type=MEDIA_TYPE)

    server = await host(handler)
    card = await fetch_server_card(str(server.make_url("/mcp/server-card")))
    assert (card.name, card.version, card.description) == (
        "com.example/weather",
        "1.0.0",
        "Weather.",
    )
    assert card.remotes[0].url == "https://example.com/mcp"
    assert MEDIA_TYPE in asked[0]


def test_the_card_url_is_next_to_the_endpoint() -> None:
    assert server_card_url("https://h.example/x/mcp") == "https://h.example/x/mcp/server-card"
    assert server_card_url("https://h.example/mcp/?a=1") == "https://h.example/mcp/server-card"


@pytest.mark.parametrize(
    ("content_type", "said"),
    [("text/html", "text/html"), ("application/octet-stream", "application/octet-stream")],
)
async def test_a_wrong_media_type_is_refused(host: Any, content_type: str, said: str) -> None:
    server = await host(card_reply(GOOD, content_type))
    with pytest.raises(ServerCardError, match=re.escape(f"answered {said}, not {MEDIA_TYPE}")):
        await fetch_server_card(str(server.make_url("/mcp/server-card")))


async def test_no_media_type_is_refused(host: Any) -> None:
    async def handler(request: web.Request) -> web.StreamResponse:
        response = web.StreamResponse()
        await response.prepare(request)
        await response.write(orjson.dumps(GOOD))
        return response

    server = await host(handler)
    with pytest.raises(ServerCardError, match="not application/mcp-server-card"):
        await fetch_server_card(str(server.make_url("/c")))


@pytest.mark.parametrize(
    ("document", "problem"),
    [
        ([GOOD], "a JSON object, not a list"),
        ("card", "a JSON object, not a string"),
        ({**GOOD, "$schema": "https://evil.example/s.json"}, r"\$schema is"),
        ({**GOOD, "name": 7}, "name is a number, not a string"),
        ({**GOOD, "name": "no-slash"}, "reverse-DNS"),
        ({**GOOD, "name": "a/b/c"}, "reverse-DNS"),
        ({k: v for k, v in GOOD.items() if k != "description"}, "description is missing"),
        ({**GOOD, "description": "d" * 101}, "description is 101 characters"),
        ({**GOOD, "version": None}, "version is null"),
        ({**GOOD, "title": ""}, "title is 0 characters"),
        ({**GOOD, "remotes": "https://x"}, "remotes is a string, not a list"),
        ({**GOOD, "remotes": [7]}, r"remotes\[0\] is a number"),
        ({**GOOD, "remotes": [{"type": "websocket", "url": "wss://x"}]}, r"remotes\[0\].type"),
        ({**GOOD, "remotes": [{"type": "sse", "url": "javascript:alert(1)"}]}, r"\.url is"),
        ({**GOOD, "remotes": [{"type": "sse"}]}, r"\.url is None"),
        (
            {**GOOD, "remotes": [{**GOOD["remotes"][0], "supportedProtocolVersions": [1]}]},
            "supportedProtocolVersions is not a list of strings",
        ),
    ],
)
async def test_what_is_not_a_card_is_refused_saying_why(
    host: Any, document: Any, problem: str
) -> None:
    server = await host(card_reply(document))
    with pytest.raises(ServerCardError, match=problem):
        await fetch_server_card(str(server.make_url("/c")))


@pytest.mark.parametrize(
    "body", [b"<html>", b"\xff\xfe", b"[" * 100_000 + b"]" * 100_000, b'{"a":1', b""]
)
async def test_what_is_not_json_is_refused(host: Any, body: bytes) -> None:
    async def handler(request: web.Request) -> web.Response:
        return web.Response(body=body, content_type=MEDIA_TYPE)

    server = await host(handler)
    with pytest.raises(ServerCardError, match="is not JSON"):
        await fetch_server_card(str(server.make_url("/c")), max_bytes=1_000_000)


async def test_a_declared_huge_card_is_not_read(host: Any) -> None:
    async def handler(request: web.Request) -> web.StreamResponse:
        response = web.StreamResponse(headers={"Content-Type": MEDIA_TYPE})
        response.content_length = 50_000_000
        await response.prepare(request)
        await response.write(b"{" + b" " * 1000)
        await asyncio.sleep(30)  # never sends the rest: the client must not wait for it
        return response

    server = await host(handler)
    started = time.monotonic()
    with pytest.raises(ServerCardError, match="50000000 bytes; at most 65536"):
        await fetch_server_card(str(server.make_url("/c")), timeout=20)
    assert time.monotonic() - started < 15


async def test_an_endless_card_is_cut_at_the_bound(host: Any) -> None:
    written = 0

    async def handler(request: web.Request) -> web.StreamResponse:
        nonlocal written
        response = web.StreamResponse(headers={"Content-Type": MEDIA_TYPE})
        await response.prepare(request)  # chunked, no length
        try:
            while written < 100_000_000:
                await response.write(b" " * 65536)
                written += 65536
        except (ConnectionError, asyncio.CancelledError):
            pass
        return response

    server = await host(handler)
    with pytest.raises(ServerCardError, match="over 4096 bytes"):
        await fetch_server_card(str(server.make_url("/c")), max_bytes=4096, timeout=20)
    assert written < 100_000_000


async def test_a_redirect_to_another_origin_is_not_followed(host: Any) -> None:
    hits: list[str] = []

    async def elsewhere(request: web.Request) -> web.Response:
        hits.append(request.path)
        return web.Response(body=orjson.dumps(GOOD), content_type=MEDIA_TYPE)

    other = await host(elsewhere)
    target = str(other.make_url("/card"))

    async def redirect(request: web.Request) -> web.Response:
        raise web.HTTPFound(target)

    server = await host(redirect)
    with pytest.raises(ServerCardError, match="redirected to another origin"):
        await fetch_server_card(str(server.make_url("/mcp/server-card")))
    assert hits == []
    # Another port of the same host is another origin too; so is another scheme.
    for location in (target.replace("http://", "https://"), "http://localhost:1/card"):

        async def moved(request: web.Request, location: str = location) -> web.Response:
            raise web.HTTPMovedPermanently(location)

        moving = await host(moved)
        with pytest.raises(ServerCardError, match="another origin"):
            await fetch_server_card(str(moving.make_url("/c")))


async def test_a_same_origin_redirect_is_followed_a_bounded_number_of_times(host: Any) -> None:
    async def handler(request: web.Request) -> web.Response:
        if request.path == "/loop":
            raise web.HTTPTemporaryRedirect("/loop")
        if request.path == "/empty":
            return web.Response(status=302)
        if request.path == "/old":
            raise web.HTTPPermanentRedirect("/mcp/server-card")
        return web.Response(body=orjson.dumps(GOOD), content_type=MEDIA_TYPE)

    server = await host(handler)
    card = await fetch_server_card(str(server.make_url("/old")))
    assert card.name == "com.example/weather"
    with pytest.raises(ServerCardError, match="redirected more than 3 times"):
        await fetch_server_card(str(server.make_url("/loop")))
    with pytest.raises(ServerCardError, match="without a Location"):
        await fetch_server_card(str(server.make_url("/empty")))


@pytest.mark.parametrize("status", [204, 304, 404, 500])
async def test_an_error_status_is_not_a_card(host: Any, status: int) -> None:
    async def handler(request: web.Request) -> web.Response:
        return web.Response(status=status, body=None if status in (204, 304) else b"{}")

    server = await host(handler)
    with pytest.raises(ServerCardError, match=f"HTTP {status}, not a server card"):
        await fetch_server_card(str(server.make_url("/c")))


async def test_a_host_that_never_answers_times_out(host: Any) -> None:
    async def handler(request: web.Request) -> web.Response:
        await asyncio.sleep(60)
        return web.Response()

    server = await host(handler)
    with pytest.raises(ServerCardError, match=r"no server card from .* within 0.5 s"):
        await fetch_server_card(str(server.make_url("/c")), timeout=0.5)


@pytest.mark.parametrize(
    "url", ["file:///etc/passwd", "ftp://127.0.0.1/card", "/mcp/server-card", "http:///x"]
)
async def test_only_http_urls_are_fetched(url: str) -> None:
    with pytest.raises(ServerCardError, match="not an http"):
        await fetch_server_card(url)


async def test_nothing_listening_is_a_clear_error() -> None:
    with pytest.raises(ServerCardError, match=r"fetching the server card at .* failed"):
        await fetch_server_card("http://127.0.0.1:1/mcp/server-card", timeout=5)
