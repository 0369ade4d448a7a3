"""Guessing a credential against `codex-mcp-http` (issue 39): wrong logins sent together,
headers first and bodies after; bearer tokens guessed as fast as one keep-alive connection
goes; wrong, expired and foreign OAuth tokens; guesses spread over every credentialed
entry and over many addresses; a login posted from another origin.

Hostile-input classes (/work/shared/hostile-input.md): "a limit counts before it checks"
(an attempt is reserved before the credential is compared, so concurrent requests cannot
widen the bound, and a right credential from another address is never locked out) and
"every read is bounded" (the limit's own state). Real servers on 127.0.0.1; the guesser
and the operator are told apart by their source address (127.0.0.0/8 is all loopback)."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import AsyncIterator, Iterator
from typing import Any
from urllib.parse import quote

import aiohttp
import pytest
from guessers import (
    BOUND,
    TOKEN,
    assert_locked_after_the_bound,
    assert_no_verdict,
    bearer,
    client,
    guess_for,
    served_for,
)
from http_helpers import JSON, init
from http_process import HttpProcess
from raw_http import read_reply, request_bytes
from token_issuer import Issuer

FORM = {"Content-Type": "application/x-www-form-urlencoded"}
#: The operator's login cookie (operator_login.COOKIE).
COOKIE = "codex_mcp_operator"


@pytest.fixture(scope="module")
def server() -> Iterator[HttpProcess]:
    """One server for the module: each test guesses from addresses of its own."""
    process = HttpProcess("--bearer-token", TOKEN)
    yield process
    process.stop()


async def login(
    http: aiohttp.ClientSession, base: str, token: str, origin: str | None = None
) -> aiohttp.ClientResponse:
    async with http.post(
        f"{base}/login",
        data={"token": token},
        headers={"Origin": origin or base},
        allow_redirects=False,
    ) as response:
        await response.read()
        return response


async def test_concurrent_wrong_logins_sent_headers_first_reach_at_most_the_bound(
    server: HttpProcess,
) -> None:
    """200 wrong logins from one address: every request's headers first (each waits for its
    `100 Continue`, so the server has them all in hand), then every body. The bound is
    taken before the body is read: at most BOUND of them are compared, the rest get 429."""
    port = int(server.base.rsplit(":", 1)[1])
    guesser = "127.0.1.1"

    async def headers_first(n: int) -> tuple[asyncio.StreamReader, asyncio.StreamWriter, bytes]:
        body = f"token=guess-{n}".encode()
        headers = {"Origin": server.base, "Expect": "100-continue", **FORM}
        whole = request_bytes("POST", "/login", dict(headers), body, port)
        head = whole[: len(whole) - len(body)]
        reader, writer = await asyncio.open_connection("127.0.0.1", port, local_addr=(guesser, 0))
        writer.write(head)
        await writer.drain()
        interim = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), 10)
        assert interim.startswith(b"HTTP/1.1 100"), interim
        return reader, writer, body

    opened = await asyncio.gather(*(headers_first(n) for n in range(200)))
    for _, writer, body in opened:
        writer.write(body)
    replies = await asyncio.gather(*(read_reply(reader) for reader, _, _ in opened))
    for _, writer, _ in opened:
        writer.close()
    statuses = [reply.status for reply in replies]
    assert set(statuses) <= {401, 429}, statuses
    assert statuses.count(401) <= BOUND, f"{statuses.count(401)} of 200 reached a verdict"
    for reply in replies:
        if reply.status == 429:
            assert_no_verdict(429, {k.title(): v for k, v in reply.headers.items()}, reply.body.decode())  # fmt: skip

    # Right after: the operator, from another address, logs in and is served...
    async with client("127.0.1.2") as operator:
        logged_in = await login(operator, server.base, TOKEN)
        assert logged_in.status == 303 and COOKIE in logged_in.cookies
        async with operator.get(f"{server.base}/metrics", headers=bearer(TOKEN)) as page:
            assert page.status == 200
    # ...while the guesser's address gets no verdict, even for the right token.
    async with client(guesser) as same_address:
        locked = await login(same_address, server.base, TOKEN)
        assert_no_verdict(locked.status, locked.headers, "")
        assert COOKIE not in locked.cookies


@pytest.mark.parametrize(
    ("seconds", "guesser", "operator"),
    [
        (1.0, "127.0.1.3", "127.0.1.4"),
        pytest.param(5.0, "127.0.1.13", "127.0.1.14", marks=pytest.mark.slow),
    ],
)
async def test_bearer_guesses_from_one_address_are_bounded_and_others_are_served(
    server: HttpProcess, seconds: float, guesser: str, operator: str
) -> None:
    guesses, served = await asyncio.gather(
        guess_for(seconds, server.url, guesser), served_for(seconds, server.url, operator)
    )
    verdicts = [status for status, _, _ in guesses].count(401)
    assert verdicts <= 100, f"{verdicts} of {len(guesses)} guesses reached a verdict"
    assert_locked_after_the_bound(guesses)
    assert served and set(served) == {200}, served  # the operator, throughout


def entries(base: str) -> list[tuple[str, str, dict[str, str], Any]]:
    """Every credentialed entry: (method, URL, headers, body)."""
    request = quote(json.dumps(init()))
    sse = {"Accept": "text/event-stream"}
    return [
        ("POST", f"{base}/mcp", JSON, json.dumps(init())),
        ("GET", f"{base}/mcp", {**sse, "Mcp-Session-Id": "x"}, None),
        ("DELETE", f"{base}/mcp", {"Mcp-Session-Id": "x"}, None),
        ("GET", f"{base}/mcp/sse?request={request}", sse, None),
        ("GET", f"{base}/sse", sse, None),
        ("POST", f"{base}/messages?session_id=x", JSON, json.dumps(init())),
        ("GET", f"{base}/", {"Accept": "text/html"}, None),
        ("GET", f"{base}/metrics", {}, None),
        ("GET", f"{base}/readyz", {}, None),
        ("POST", f"{base}/login", {"Origin": base}, {"token": "a guess"}),
    ]


async def test_guesses_on_every_credentialed_entry_count_toward_one_bound(
    server: HttpProcess,
) -> None:
    async with client("127.0.1.5") as http:
        routes = entries(server.base)
        assert len(routes) == BOUND
        for method, url, headers, body in routes:  # one guess each: the bound's worth
            async with http.request(
                method, url, headers={**headers, **bearer("a guess")}, data=body
            ) as refused:
                assert refused.status == 401, (method, url, await refused.text())
        for method, url, headers, body in routes:  # now every entry is locked
            async with http.request(
                method, url, headers={**headers, **bearer("a guess")}, data=body
            ) as locked:
                assert_no_verdict(locked.status, locked.headers, await locked.text())
            async with http.request(method, url, headers=headers, data=body) as no_token:
                # Sending no credential is no guess: its answer says nothing of a token.
                assert no_token.status in (401, 403, 429), (method, url)


async def test_a_login_from_another_origin_is_refused(server: HttpProcess) -> None:
    """A login CSRF: another loopback origin's page posting our form. Only the server's own
    origin (its Host as the client reached it) may, with or without --allowed-origins."""
    port = int(server.base.rsplit(":", 1)[1])
    async with client("127.0.1.6") as http:
        for origin in (
            "http://localhost:1",
            f"http://localhost:{port}",  # another origin for the browser than 127.0.0.1
            f"http://127.0.0.1:{port + 1}",
            "null",
        ):
            refused = await login(http, server.base, TOKEN, origin=origin)
            assert refused.status == 403, origin
            assert COOKIE not in refused.cookies
        own = await login(http, server.base, TOKEN, origin=server.base)
        assert own.status == 303 and COOKIE in own.cookies


async def test_a_login_from_a_listed_origin_passes_and_from_a_cors_origin_does_not() -> None:
    listed, page = "http://ops.example", "http://app.example"
    process = HttpProcess(
        "--bearer-token", TOKEN, "--allowed-origins", listed, "--cors-origin", page
    )
    try:
        async with client("127.0.1.7") as http:
            assert (await login(http, process.base, TOKEN, origin=listed)).status == 303
            # A page allowed to call the API with its own token has no use for our form.
            assert (await login(http, process.base, TOKEN, origin=page)).status == 403
            assert (await login(http, process.base, TOKEN, origin="http://localhost:1")).status == 403  # fmt: skip
    finally:
        process.stop()


async def test_many_guessing_addresses_lock_guessers_sooner_but_not_a_right_token() -> None:
    """Past ten times the per-address bound in all, an address that has failed once is
    locked; an address that has not is served, its right token and its first guess."""
    per_address = 2
    process = HttpProcess("--bearer-token", TOKEN, "--auth-failures-per-minute", str(per_address))
    try:
        for n in range(10):  # 10 addresses x 2 failures: the bound in all
            async with client(f"127.0.2.{n + 1}") as http:
                for _ in range(per_address):
                    async with http.get(f"{process.base}/readyz", headers=bearer("x")) as r:
                        assert r.status == 401
        async with client("127.0.2.100") as late:
            async with late.get(f"{process.base}/readyz", headers=bearer("x")) as first:
                assert first.status == 401  # a new address gets its verdict...
            async with late.get(f"{process.base}/readyz", headers=bearer("x")) as second:
                assert_no_verdict(second.status, second.headers, await second.text())
        async with (
            client("127.0.2.101") as operator,  # ...and a right token is served
            operator.get(f"{process.base}/readyz", headers=bearer(TOKEN)) as ok,
        ):
            assert ok.status == 200
    finally:
        process.stop()


@pytest.fixture(scope="module")
def issuer() -> Iterator[Issuer]:
    server = Issuer()
    yield server
    server.stop()


@pytest.fixture
async def oauth_server(issuer: Issuer) -> AsyncIterator[HttpProcess]:
    process = HttpProcess("--oauth-issuer", issuer.url)
    yield process
    process.stop()


async def test_refused_oauth_tokens_count_and_right_ones_never_do(
    oauth_server: HttpProcess, issuer: Issuer
) -> None:
    url = oauth_server.url
    other = Issuer()  # signs with a key the server does not know
    try:
        wrong = [
            issuer.token(url, exp=time.time() - 3600),  # expired
            issuer.token("http://127.0.0.1:1/mcp"),  # for another resource
            other.token(url),  # signed by someone else
            "not.a.jwt",
        ]
    finally:
        other.stop()
    async with client("127.0.3.1") as guesser:
        for n in range(BOUND):
            async with guesser.post(
                url, json=init(), headers={**JSON, **bearer(wrong[n % len(wrong)])}
            ) as refused:
                assert refused.status == 401, await refused.text()
        right = issuer.token(url)
        async with guesser.post(url, json=init(), headers={**JSON, **bearer(right)}) as locked:
            assert_no_verdict(locked.status, locked.headers, await locked.text())
    async with client("127.0.3.2") as operator:
        for _ in range(3 * BOUND):  # a right token, again and again: never a failure
            async with operator.post(
                url, json=init(), headers={**JSON, **bearer(issuer.token(url))}
            ) as ok:
                assert ok.status == 200, await ok.text()
        async with operator.post(url, json=init(), headers={**JSON, **bearer(wrong[0])}) as r:
            assert r.status == 401  # its first failure: still a verdict


async def test_concurrent_oauth_guesses_cannot_widen_the_bound(
    oauth_server: HttpProcess, issuer: Issuer
) -> None:
    """Tokens naming a key the issuer does not publish: each makes the server look the key
    up (an await between taking the request and the verdict)."""
    import jwt

    url = oauth_server.url
    forged = [
        jwt.encode({"sub": "x"}, issuer.key, "RS256", headers={"kid": f"unknown-{n}"})
        for n in range(60)
    ]
    connector = aiohttp.TCPConnector(local_addr=("127.0.3.3", 0), limit=0)  # all at once
    async with aiohttp.ClientSession(connector=connector) as http:

        async def guess(token: str) -> int:
            async with http.post(url, json=init(), headers={**JSON, **bearer(token)}) as r:
                await r.read()
                return r.status

        statuses = await asyncio.gather(*(guess(token) for token in forged))
        assert set(statuses) <= {401, 429}, statuses
        assert statuses.count(401) <= BOUND, f"{statuses.count(401)} of 60 reached a verdict"
        assert await guess(issuer.token(url)) == 429


def test_the_limits_state_is_bounded_and_an_ipv6_64_is_one_address() -> None:
    from codex_mcp.transports.http.guessing import TRACKED_ADDRESSES, GuessingLimit

    many = GuessingLimit(per_address=3)
    for n in range(3 * TRACKED_ADDRESSES):  # more guessing addresses than it keeps
        attempt = many.attempt(f"10.{n >> 16 & 255}.{n >> 8 & 255}.{n & 255}")
        assert not attempt.wait  # each new address has its first verdict
        attempt.failed()
    assert len(many) <= TRACKED_ADDRESSES
    # One /64 is one client: its addresses share a bound; the next /64 is another client.
    limit = GuessingLimit(per_address=3)
    for address in ("2001:db8:0:1::1", "2001:db8:0:1::2", "2001:db8:0:1:ffff:ffff:ffff:ffff"):
        attempt = limit.attempt(address)
        assert not attempt.wait
        attempt.failed()
    assert limit.attempt("2001:db8:0:1::99").wait
    assert not limit.attempt("2001:db8:0:2::1").wait
    # An IPv4 address mapped into IPv6 is that IPv4 address.
    for _ in range(3):
        limit.attempt("192.0.2.7").failed()
    assert limit.attempt("::ffff:192.0.2.7").wait
    # A right credential leaves nothing behind; an attempt that ends with no verdict is none.
    before = len(limit)
    limit.attempt("192.0.2.8").passed()
    with limit.attempt("192.0.2.9"):
        pass
    assert len(limit) == before
