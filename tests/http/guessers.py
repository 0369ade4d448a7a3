"""A guesser and an operator of the guessing tests (test_hostile_guessing.py, behind a proxy
test_hostile_forwarded.py): clients bound to a source address (127.0.0.0/8 is all loopback),
a burst of wrong bearer tokens, a right token's calls, and what a locked address is answered."""

from __future__ import annotations

import time
from typing import Any

import aiohttp
from http_helpers import JSON, call, init, open_session

TOKEN = "the-operators-right-token"
#: Failed credentials an address may have a minute (--auth-failures-per-minute's default).
BOUND = 10


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def client(address: str) -> aiohttp.ClientSession:
    """An HTTP client whose connections come from `address` (one keep-alive connection)."""
    connector = aiohttp.TCPConnector(local_addr=(address, 0), limit=1)
    return aiohttp.ClientSession(connector=connector, cookie_jar=aiohttp.DummyCookieJar())


def assert_no_verdict(status: int, headers: Any, body: str) -> None:
    """A locked address's answer: 429 with when to come back, and nothing about the token."""
    assert status == 429, (status, body[:300])
    assert 1 <= int(headers["Retry-After"]) <= 60, headers
    assert "WWW-Authenticate" not in headers
    assert "invalid" not in body.lower() and "not accepted" not in body, body[:300]


async def guess_for(
    seconds: float, url: str, address: str, forge: bool = False
) -> list[tuple[int, Any, str]]:
    """Wrong bearer tokens on one keep-alive connection for `seconds`, and at least 3 times
    the bound however slow the machine; with `forge`, each one names a new client address of
    its own in X-Forwarded-For."""
    answers = []
    deadline = time.monotonic() + seconds
    async with client(address) as http:
        n = 0
        while time.monotonic() < deadline or n <= 3 * BOUND:
            n += 1
            headers = {**JSON, **bearer(f"guess-{n}")}
            if forge:
                headers["X-Forwarded-For"] = f"198.51.100.{n % 250 + 1}"
            async with http.post(url, json=init(), headers=headers) as r:
                answers.append((r.status, r.headers, await r.text()))
    return answers


async def served_for(seconds: float, url: str, address: str) -> list[int]:
    """The right token's calls from `address` for `seconds`: each one's status."""
    statuses = []
    async with client(address) as http:
        headers = await open_session(http, url, **bearer(TOKEN))
        deadline = time.monotonic() + seconds
        n = 0
        while time.monotonic() < deadline:
            n += 1
            message = call(n, "echo", {"message": "still served"})
            async with http.post(url, json=message, headers=headers) as r:
                statuses.append(r.status)
                await r.read()
    return statuses


def assert_locked_after_the_bound(guesses: list[tuple[int, Any, str]]) -> None:
    """The guesser's answers: BOUND verdicts (401), then 429 with no verdict to the end."""
    statuses = [status for status, _, _ in guesses]
    assert len(guesses) > 3 * BOUND, len(guesses)  # the guesser kept going past the bound
    assert set(statuses) <= {401, 429}, set(statuses)
    assert statuses[:BOUND] == [401] * BOUND, statuses[: 2 * BOUND]
    for status, headers, body in guesses[BOUND:]:  # then locked, for the rest of the run
        assert_no_verdict(status, headers, body)
