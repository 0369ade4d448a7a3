"""The operator's browser login to the status page (`/login`, a cookie for `/` and
`/metrics`) against what a hostile client sends: a wrong token, a forged, altered,
expired or another server's cookie, the cookie replayed against `/mcp`, a login from
another origin or no browser form, a guessing run; and HTML in what the page shows (a
client's name, a child's stderr). Real `codex-mcp-http` processes on 127.0.0.1, and an
in-process app on a real socket where a cookie must be minted under a known key."""

from __future__ import annotations

import asyncio
import json
import sys
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from aiohttp.test_utils import TestServer
from codex_mcp.transports.http import HttpConfig
from codex_mcp.transports.http.app import create_app
from http_helpers import JSON, build_test_server, init, open_session
from http_process import HttpProcess

#: The login cookie's name (operator_login.COOKIE).
COOKIE = "codex_mcp_operator"
#: How long a login lasts (operator_login.LOGIN_SECONDS).
LOGIN_SECONDS = 8 * 3600
TOKEN = "hostile-status-token"
OTHER_TOKEN = "another-servers-token"
HTML = {"Accept": "text/html,application/xhtml+xml"}
HOSTILE = '<script>alert("x")</script><img src=x onerror=alert(1)>"\'&'


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


@pytest.fixture(scope="module")
def server() -> Iterator[HttpProcess]:
    process = HttpProcess("--bearer-token", TOKEN)
    yield process
    process.stop()


@pytest.fixture
async def http() -> AsyncIterator[aiohttp.ClientSession]:
    # Cookies only where a test sets them: a jar would carry one between requests.
    async with aiohttp.ClientSession(cookie_jar=aiohttp.DummyCookieJar()) as session:
        yield session


async def login(
    http: aiohttp.ClientSession, base: str, token: str, origin: str | None = None
) -> aiohttp.ClientResponse:
    headers = {"Origin": origin or base}
    async with http.post(
        f"{base}/login", data={"token": token}, headers=headers, allow_redirects=False
    ) as response:
        await response.read()
        return response


async def logged_in_cookie(http: aiohttp.ClientSession, base: str, token: str = TOKEN) -> str:
    response = await login(http, base, token)
    assert response.status == 303, response.status
    assert response.headers["Location"] == "/"
    return response.cookies[COOKIE].value


def with_cookie(value: str, **headers: str) -> dict[str, str]:
    return {"Cookie": f"{COOKIE}={value}", **headers}


async def test_a_login_gives_a_cookie_that_is_not_the_token_and_opens_the_pages(
    server: HttpProcess, http: aiohttp.ClientSession
) -> None:
    response = await login(http, server.base, TOKEN)
    assert response.status == 303
    morsel = response.cookies[COOKIE]
    assert morsel["httponly"] is True
    assert morsel["samesite"] == "Strict"
    assert not morsel["secure"]  # plain http on loopback; Secure over https
    assert morsel["path"] == "/"
    assert 0 < int(morsel["max-age"]) <= LOGIN_SECONDS
    assert TOKEN not in morsel.value
    async with http.get(f"{server.base}/", headers=with_cookie(morsel.value, **HTML)) as page:
        assert page.status == 200
        assert "codex-mcp status" in await page.text()
        assert "default-src 'none'" in page.headers["Content-Security-Policy"]
        assert page.headers["Cache-Control"] == "no-store"
    async with http.get(f"{server.base}/metrics", headers=with_cookie(morsel.value)) as metrics:
        assert metrics.status == 200
        assert "codex_mcp_http_refused" in await metrics.text()


async def test_without_a_credential_a_browser_gets_the_form_and_a_client_json(
    server: HttpProcess, http: aiohttp.ClientSession
) -> None:
    async with http.get(f"{server.base}/", headers=HTML) as page:
        assert page.status == 401
        assert page.headers["WWW-Authenticate"].startswith("Bearer")
        body = await page.text()
        assert '<form method="post" action="/login">' in body
        assert "codex-mcp status</title>" not in body.replace("log in", "")  # not the page
    async with http.get(f"{server.base}/") as plain:
        assert plain.status == 401
        assert plain.content_type == "application/json"
    async with http.get(f"{server.base}/metrics", headers=HTML) as metrics:
        assert metrics.status == 401  # only / shows the form


async def test_a_wrong_token_gets_no_cookie(server: HttpProcess) -> None:
    async with aiohttp.ClientSession(cookie_jar=aiohttp.DummyCookieJar()) as http:
        response = await login(http, server.base, "not-the-token")
        assert response.status == 401
        assert COOKIE not in response.cookies


async def test_a_forged_or_altered_cookie_opens_nothing(
    server: HttpProcess, http: aiohttp.ClientSession
) -> None:
    good = await logged_in_cookie(http, server.base)
    payload, _, mac = good.rpartition(".")
    version, expires, bound = payload.split(".")
    later = f"{version}.{int(expires) + 10**6}.{bound}"
    forged = [
        "",
        "x",
        TOKEN,  # the token itself is not a cookie
        f"{payload}.{'A' * len(mac)}",  # a made-up MAC
        f"{later}.{mac}",  # a later expiry under the old MAC
        f"{version}.{expires}.s{'A' * (len(bound) - 1)}.{mac}",  # another credential
        good + "x",
        "v1.99999999999.s" + "A" * 24 + "." + "A" * 43,
        "é" * 40,
        "a." * 200,
        good * 4,  # past the length bound
    ]
    for value in forged:
        for path in ("/", "/metrics"):
            async with http.get(f"{server.base}{path}", headers=with_cookie(value)) as refused:
                assert refused.status == 401, (value, path)
    async with http.get(f"{server.base}/", headers=with_cookie(good)) as page:
        assert page.status == 200  # the genuine one still works


async def test_the_cookie_does_not_open_mcp(
    server: HttpProcess, http: aiohttp.ClientSession
) -> None:
    cookie = await logged_in_cookie(http, server.base)
    same_origin = {"Origin": server.base}
    async with http.post(
        server.url, json=init(), headers={**JSON, **with_cookie(cookie, **same_origin)}
    ) as post:
        assert post.status == 401
    async with http.get(server.url, headers=with_cookie(cookie, Accept="text/event-stream")) as get:
        assert get.status == 401
    async with http.get(
        f"{server.base}/mcp/sse?request=" + json.dumps(init()), headers=with_cookie(cookie)
    ) as single:
        assert single.status == 401
    for path in ("/sse", "/readyz"):
        async with http.get(f"{server.base}{path}", headers=with_cookie(cookie)) as other:
            assert other.status == 401, path
    # A POST to the operator's pages does not read it either (a cookie is for reading).
    async with http.post(f"{server.base}/metrics", headers=with_cookie(cookie)) as post_page:
        assert post_page.status == 401


async def test_a_cookie_from_another_server_instance_is_refused(
    server: HttpProcess, http: aiohttp.ClientSession
) -> None:
    other = HttpProcess("--bearer-token", TOKEN)  # same token, another instance
    try:
        theirs = await logged_in_cookie(http, other.base)
        async with http.get(f"{server.base}/", headers=with_cookie(theirs)) as refused:
            assert refused.status == 401
        async with http.get(f"{other.base}/", headers=with_cookie(theirs)) as accepted:
            assert accepted.status == 200
    finally:
        other.stop()


async def test_a_login_from_another_origin_or_no_form_is_refused(
    server: HttpProcess, http: aiohttp.ClientSession
) -> None:
    evil = await login(http, server.base, TOKEN, origin="http://evil.example")
    assert evil.status == 403 and COOKIE not in evil.cookies
    async with http.post(
        f"{server.base}/login", data={"token": TOKEN}, allow_redirects=False
    ) as no_origin:  # no browser form sends a POST without Origin
        assert no_origin.status == 403 and COOKIE not in no_origin.cookies
    async with http.post(
        f"{server.base}/login",
        json={"token": TOKEN},
        headers={"Origin": server.base},
        allow_redirects=False,
    ) as not_a_form:
        assert not_a_form.status == 415
    async with http.post(
        f"{server.base}/login",
        data={"token": "x" * 20_000},
        headers={"Origin": server.base},
        allow_redirects=False,
    ) as too_long:
        assert too_long.status == 413
    async with http.put(f"{server.base}/login", headers={"Origin": server.base}) as put:
        assert put.status == 405


async def test_guessing_is_bounded_even_for_the_right_token(http: aiohttp.ClientSession) -> None:
    """The bound is the one every credential shares (tests/http/test_hostile_guessing.py):
    the guesser's address gets no verdict, the bearer header included; another is served."""
    fresh = HttpProcess("--bearer-token", TOKEN)  # its own count of failures
    try:
        answers = [(await login(http, fresh.base, f"guess-{n}")).status for n in range(10)]
        assert answers == [401] * 10
        locked = await login(http, fresh.base, TOKEN)
        assert locked.status == 429 and 1 <= int(locked.headers["Retry-After"]) <= 60
        assert COOKIE not in locked.cookies  # the lock says nothing of which guess was right
        async with http.get(f"{fresh.base}/", headers=bearer(TOKEN)) as page:
            assert page.status == 429  # nor does the bearer header, from that address
        elsewhere = aiohttp.TCPConnector(local_addr=("127.0.0.2", 0))
        async with aiohttp.ClientSession(
            connector=elsewhere, cookie_jar=aiohttp.DummyCookieJar()
        ) as operator:
            assert (await login(operator, fresh.base, TOKEN)).status == 303
            async with operator.get(f"{fresh.base}/", headers=bearer(TOKEN)) as page:
                assert page.status == 200
        assert fresh.process.poll() is None
    finally:
        fresh.stop()


SECRET = b"a known secret, as a --workers supervisor hands down"


@pytest.fixture
async def known_key_server() -> AsyncIterator[str]:
    """The app on a real socket, signing its cookies from a secret the test knows."""
    config = HttpConfig(bearer_tokens=[TOKEN], operator_cookie_secret=SECRET)
    app = create_app(build_test_server().core, config)
    async with TestServer(app, host="127.0.0.1") as test_server:
        yield str(test_server.make_url("")).rstrip("/")


async def test_an_expired_cookie_is_refused(
    known_key_server: str, http: aiohttp.ClientSession
) -> None:
    import hashlib

    from codex_mcp.transports.http.operator_login import OperatorLogin

    fingerprint = hashlib.sha256(TOKEN.encode()).hexdigest()
    minting = OperatorLogin("", SECRET, [fingerprint])
    fresh, _ = minting.issue(fingerprint, None, time.time())
    expired, _ = minting.issue(fingerprint, None, time.time() - LOGIN_SECONDS - 1)
    async with http.get(f"{known_key_server}/", headers=with_cookie(fresh)) as page:
        assert page.status == 200  # a cookie minted under the key works...
    async with http.get(f"{known_key_server}/", headers=with_cookie(expired)) as refused:
        assert refused.status == 401  # ...until it expires
    # A cookie for a token the server does not have (removed, rotated) opens nothing.
    removed = hashlib.sha256(b"a removed token").hexdigest()
    stale, _ = OperatorLogin("", SECRET, [removed]).issue(removed, None, time.time())
    async with http.get(f"{known_key_server}/", headers=with_cookie(stale)) as refused:
        assert refused.status == 401


def hostile_gateway(tmp_path: Path) -> Path:
    """A child that writes HTML to stderr and exits: the page shows its stderr tail."""
    script = f"import sys; sys.stderr.write({HOSTILE!r} * 2 + '\\n'); sys.exit(3)"
    config = {"mcpServers": {"evil": {"command": sys.executable, "args": ["-c", script]}}}
    path = tmp_path / ".mcp.json"
    path.write_text(json.dumps(config))
    return path


def without_markup(body: str) -> None:
    for raw in ("<script>", "<img src=x", 'onerror=alert(1)>"'):
        assert raw not in body, raw


async def test_html_in_a_client_name_or_a_childs_stderr_is_shown_escaped(
    tmp_path: Path, http: aiohttp.ClientSession
) -> None:
    import os

    env = {**os.environ, "CODEX_MCP_WRAPPER_CONFIG": str(hostile_gateway(tmp_path))}
    gateway = HttpProcess("--bearer-token", TOKEN, env=env)
    try:
        hello = init()
        hello["params"]["clientInfo"] = {"name": HOSTILE, "version": HOSTILE}
        async with http.post(gateway.url, json=hello, headers={**JSON, **bearer(TOKEN)}) as r:
            assert r.status == 200
        deadline = time.monotonic() + 20
        while True:
            async with http.get(f"{gateway.base}/", headers=bearer(TOKEN)) as page:
                body = await page.text()
            if "&lt;script&gt;alert(&quot;x&quot;)" in body and body.count("&lt;script&gt;") >= 3:
                break  # the client's name, and the child's stderr (twice)
            assert time.monotonic() < deadline, body
            await asyncio.sleep(0.2)
        without_markup(body)
        assert "&lt;img src=x onerror=alert(1)&gt;&quot;&#x27;&amp;" in body
    finally:
        gateway.stop()


async def test_open_session_is_unaffected(server: HttpProcess, http: aiohttp.ClientSession) -> None:
    """The bearer header keeps working everywhere, beside a cookie or not."""
    headers: dict[str, Any] = await open_session(http, server.url, **bearer(TOKEN))
    assert headers["Mcp-Session-Id"]


OPERATOR = "mcp.operator"


@pytest.mark.interop
async def test_with_oauth_the_operator_logs_in_with_a_token_holding_the_operator_scope(
    http: aiohttp.ClientSession,
) -> None:
    from oauth_helpers import AuthorizationServer

    issuer = AuthorizationServer()
    server = HttpProcess("--oauth-issuer", issuer.issuer, "--oauth-scope", "mcp")
    try:
        client_token = await issuer.token(audience=server.url, scope="mcp")
        refused = await login(http, server.base, client_token)
        assert refused.status == 403 and COOKIE not in refused.cookies  # no operator scope
        operator_token = await issuer.token(audience=server.url, scope=OPERATOR)
        response = await login(http, server.base, operator_token)
        assert response.status == 303
        morsel = response.cookies[COOKIE]
        # No longer than the token: the mock issuer's tokens live an hour.
        assert 0 < int(morsel["max-age"]) <= 3600
        async with http.get(f"{server.base}/", headers=with_cookie(morsel.value)) as page:
            assert page.status == 200
        async with http.post(
            server.url, json=init(), headers={**JSON, **with_cookie(morsel.value)}
        ) as mcp:
            assert mcp.status == 401
        foreign = await issuer.token(audience="http://127.0.0.1:1/mcp", scope=OPERATOR)
        assert (await login(http, server.base, foreign)).status == 401
    finally:
        server.stop()
        issuer.stop()


@pytest.mark.slow
async def test_every_worker_of_one_supervisor_takes_the_login() -> None:
    """Under --workers the kernel spreads connections: each worker takes the cookie one of
    them issued (their supervisor hands them one key), or the page's reload would log the
    operator out at random."""
    from scale_setup import REDIS, SERVING, RedisServer

    if REDIS is None:
        pytest.skip("redis-server not installed")
    redis = RedisServer()
    server = HttpProcess("--workers", "2", "--bearer-token", TOKEN, "--redis-url", redis.url)
    try:
        deadline = time.monotonic() + 60  # a loaded machine starts two workers slowly
        while server.stderr.count(SERVING) < 2:
            assert time.monotonic() < deadline, f"the workers never served:\n{server.stderr}"
            await asyncio.sleep(0.05)
        connector = aiohttp.TCPConnector(force_close=True)  # a new connection each time
        async with aiohttp.ClientSession(
            connector=connector, cookie_jar=aiohttp.DummyCookieJar()
        ) as http:
            cookie = await logged_in_cookie(http, server.base)
            statuses = []
            for _ in range(24):  # all on one worker: 1 chance in 2**23
                async with http.get(f"{server.base}/", headers=with_cookie(cookie)) as page:
                    statuses.append(page.status)
            assert statuses == [200] * 24
    finally:
        server.stop()
        redis.stop()


async def test_a_login_body_arriving_in_pieces_is_read_whole(
    server: HttpProcess, http: aiohttp.ClientSession
) -> None:
    arrived = asyncio.Event()

    async def pieces() -> AsyncIterator[bytes]:
        yield b"token=" + TOKEN[:5].encode()
        await asyncio.sleep(0)  # a chunk of its own, sent before the rest
        arrived.set()
        yield TOKEN[5:].encode()

    async with http.post(
        f"{server.base}/login",
        data=pieces(),
        headers={"Origin": server.base, "Content-Type": "application/x-www-form-urlencoded"},
        allow_redirects=False,
    ) as response:
        assert arrived.is_set()
        assert response.status == 303, await response.text()
        assert COOKIE in response.cookies


async def test_the_cookie_is_secure_behind_a_trusted_https_proxy_only(
    http: aiohttp.ClientSession,
) -> None:
    proxied = HttpProcess("--bearer-token", TOKEN, "--forwarded-hosts", "status.example")
    try:
        via_proxy = {
            "X-Forwarded-Host": "status.example",
            "X-Forwarded-Proto": "https",
            "Origin": "https://status.example",
        }
        async with http.post(
            f"{proxied.base}/login",
            data={"token": TOKEN},
            headers=via_proxy,
            allow_redirects=False,
        ) as response:
            assert response.status == 303
            assert response.cookies[COOKIE]["secure"] is True
        # X-Forwarded-Proto from a client that did not come through the listed proxy.
        claimed = {"X-Forwarded-Proto": "https", "Origin": proxied.base}
        async with http.post(
            f"{proxied.base}/login",
            data={"token": TOKEN},
            headers=claimed,
            allow_redirects=False,
        ) as response:
            assert response.status == 303
            assert not response.cookies[COOKIE]["secure"]
    finally:
        proxied.stop()
