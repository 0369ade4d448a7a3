"""Hostile access tokens and a hostile issuer against `codex-mcp-http --oauth-issuer`, a real
server process, with an issuer of the test's own on 127.0.0.1 (issue 28).

Hostile-input classes (/work/shared/hostile-input.md): "size, depth, type" for what an
unauthenticated client sends (a token: bad base64, non-UTF-8 bytes, a header that is no
object, `alg`/`kid` of every JSON type, a `crit` header, huge or nested values, claims
of the wrong type) and for what the issuer sends (a JWKS or metadata far too large,
nested deep, of the wrong types); "a bad value costs its own request": every token gets a
401 (or 503 when the issuer's keys cannot be had), never a 5xx or a traceback, and the
server serves on.
"""

from __future__ import annotations

import base64
import http.client
import json
import re
import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from http_helpers import JSON, init
from http_process import HttpProcess
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from token_issuer import KID, Issuer

#: Hundreds of wrong tokens from one address, on purpose: the bound they would reach is
#: tests/http/test_hostile_guessing.py's to show.
UNBOUNDED = ("--auth-failures-per-minute", "100000")


@pytest.fixture(scope="module")
def issuer() -> Iterator[Issuer]:
    server = Issuer()
    yield server
    server.stop()


@pytest.fixture(scope="module")
def protected(issuer: Issuer) -> Iterator[HttpProcess]:
    server = HttpProcess("--oauth-issuer", issuer.url, *UNBOUNDED)
    yield server
    server.stop()


def _post(url: str, authorization: bytes, timeout: float = 20) -> tuple[int, dict[str, str], bytes]:
    """POST initialize with this Authorization header, its bytes sent as they are."""
    address = re.match(r"http://([^/]+)(/.*)", url)
    assert address is not None
    host, port = address[1].rsplit(":", 1)
    connection = http.client.HTTPConnection(host, int(port), timeout=timeout)
    try:
        body = json.dumps(init()).encode()
        connection.putrequest("POST", address[2])
        for name, value in {**JSON, "Content-Length": str(len(body))}.items():
            connection.putheader(name, value)
        connection.putheader("Authorization", authorization)
        connection.endheaders(body)
        reply = connection.getresponse()
        return reply.status, dict(reply.getheaders()), reply.read()
    finally:
        connection.close()


def _b64(data: bytes) -> bytes:
    return base64.urlsafe_b64encode(data).rstrip(b"=")


def _assert_refused_cleanly(status: int, headers: dict[str, str], body: bytes) -> None:
    assert status < 500 or status == 503, (status, body[:300])
    if status == 401:
        assert 'error="invalid_token"' in headers["WWW-Authenticate"], headers
        message = json.loads(body)["error"]["message"]
        assert len(message) < 300, message
        assert len(headers["WWW-Authenticate"]) < 600, headers


def _assert_serves(server: HttpProcess, issuer: Issuer) -> None:
    good = issuer.token(server.url).encode()
    status, _, body = _post(server.url, b"Bearer " + good)
    assert status == 200, body[:300]
    assert "Traceback" not in server.stderr, server.stderr[-3000:]


JSON_VALUES = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False)
    | st.text(max_size=12)
    | st.sampled_from(["RS256", "none", "HS256", KID, "\u2603", "a\nb", "x" * 3000]),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner),
    max_leaves=8,
)
HEADERS = st.fixed_dictionaries(
    {},
    optional={
        "alg": st.sampled_from(["RS256", "ES256", "none", "HS256"]) | JSON_VALUES,
        "kid": st.just(KID) | JSON_VALUES,
        "crit": JSON_VALUES,
        "typ": JSON_VALUES,
        "jku": JSON_VALUES,
        "b64": JSON_VALUES,
    },
)
CLAIMS = st.fixed_dictionaries(
    {},
    optional={
        "exp": st.just(time.time() + 600) | JSON_VALUES,
        "nbf": JSON_VALUES,
        "iat": JSON_VALUES,
        "aud": JSON_VALUES,
        "iss": JSON_VALUES,
        "sub": JSON_VALUES,
        "scope": JSON_VALUES,
        "scp": JSON_VALUES,
        "jti": JSON_VALUES,
    },
)


@st.composite
def tokens(draw: st.DrawFn, sign: Callable[[bytes], bytes]) -> bytes:
    """An Authorization header's token, of every kind we can be sent."""
    kind = draw(st.sampled_from(["unsigned", "signed", "raw", "segments"]))
    if kind == "raw":  # any bytes (not CR/LF, which no header can carry)
        return draw(st.binary(max_size=300).filter(lambda b: b"\r" not in b and b"\n" not in b))
    if kind == "segments":  # bad base64, non-JSON, non-UTF-8, nesting, in JWT shape
        segment = st.sampled_from(
            [
                b"!!!",
                b"e30",
                b"W10",
                _b64(b"\xff\xfe\x80"),
                _b64(b"[" * 5000 + b"]" * 5000),
                _b64(b'{"alg":' * 2000),
                _b64(b"1"),
                _b64(b'"RS256"'),
                b"A" * 6000,
                b"",
            ]
        )
        parts = draw(st.lists(segment, min_size=1, max_size=4))
        return b".".join(parts)
    header = draw(HEADERS)
    claims = draw(CLAIMS)
    encoded = _b64(json.dumps(header).encode()) + b"." + _b64(json.dumps(claims).encode())
    if kind == "unsigned":
        return encoded + b"." + _b64(draw(st.binary(max_size=300)))
    return encoded + b"." + _b64(sign(encoded))  # signed with the issuer's real key


@pytest.mark.slow
def test_every_hostile_token_gets_401_and_the_server_serves_on(
    protected: HttpProcess, issuer: Issuer
) -> None:
    _assert_serves(protected, issuer)  # the keys are fetched: hostile tokens reach them
    sent = 0

    @settings(
        max_examples=300,
        deadline=None,
        database=None,
        suppress_health_check=list(HealthCheck),
    )
    @given(
        tokens(issuer.sign).filter(lambda token: token.strip(b" \t"))
    )  # blank: "missing", no error
    def throw(token: bytes) -> None:
        nonlocal sent
        sent += 1
        status, headers, body = _post(protected.url, b"Bearer " + token)
        _assert_refused_cleanly(status, headers, body)

    lines_before = len(protected.lines)
    throw()
    # A refusal is at most one log line (they are rate-limited beyond a burst).
    assert len(protected.lines) - lines_before <= sent, protected.stderr[-3000:]
    _assert_serves(protected, issuer)


@pytest.mark.parametrize(
    "token",
    [
        b"eyJhbGciOlsiUlMyNTYiXX0.e30.c2ln",  # alg a list
        _b64(b'{"alg":{"a":1}}') + b".e30.c2ln",  # alg an object
        _b64(b'{"alg":"RS256","kid":7}') + b".e30.c2ln",  # kid a number
        _b64(b'{"alg":"RS256","kid":"k1","crit":["exp"]}') + b".e30.c2ln",
        _b64(b'{"alg":"\xe2\x98\x83"}') + b".e30.c2ln",  # not latin-1
        b"\xff\xfe.\x80.\x81",  # not UTF-8
        _b64(b"[" * 50_000) + b".e30.c2ln",  # nested past the recursion limit
    ],
)
def test_a_malformed_token_header_is_401_invalid_token(
    token: bytes, protected: HttpProcess, issuer: Issuer
) -> None:
    status, headers, body = _post(protected.url, b"Bearer " + token)
    assert status in (400, 401), body[:300]  # 400: aiohttp's own header limit
    _assert_refused_cleanly(status, headers, body)
    assert "Traceback" not in protected.stderr, protected.stderr[-3000:]


def _peak_rss_kib(pid: int) -> int:
    with open(f"/proc/{pid}/status") as status:
        found = re.search(r"VmHWM:\s+(\d+) kB", status.read())
    assert found is not None
    return int(found[1])


def _jwks_flood(total_mib: int) -> Iterator[bytes]:
    """A key set that never ends before `total_mib` MiB: many tiny key objects."""
    yield b'{"keys": ['
    chunk = b'{"kty":"oct","k":"AA"},' * (1 << 16)
    for _ in range(total_mib * (1 << 20) // len(chunk)):
        yield chunk
    yield b'{"kty":"oct"}]}'


HOSTILE_KEY_SETS: dict[str, Any] = {
    "keys an object": b'{"keys": {"kid": "k1"}}',
    "keys a string": b'{"keys": "k1"}',
    "a key a list": b'{"keys": [["k1"]]}',
    "a key of wrong types": b'{"keys": [{"kty": "RSA", "kid": "k1", "n": 5, "e": [1]}]}',
    "a key whose kty is a list": b'{"keys": [{"kty": ["RSA"], "kid": "k1"}]}',
    "a key whose alg is an object": b'{"keys": [{"kty": "RSA", "kid": "k1", "alg": {}}]}',
    "nested deep": b'{"keys": ' + b"[" * 100_000 + b"]" * 100_000 + b"}",
    "not JSON": b"\xff\xfe not json",
    "a list": b"[]",
}


@pytest.mark.slow
@pytest.mark.parametrize("case", [*HOSTILE_KEY_SETS, "16 MiB"])
def test_a_hostile_key_set_is_a_clean_refusal_and_read_with_a_cap(
    case: str, issuer: Issuer
) -> None:
    server = HttpProcess("--oauth-issuer", issuer.url, *UNBOUNDED)
    try:
        token = issuer.token(server.url).encode()
        issuer.jwks = _jwks_flood(16) if case == "16 MiB" else HOSTILE_KEY_SETS[case]
        before = _peak_rss_kib(server.pid)
        status, headers, body = _post(server.url, b"Bearer " + token)
        assert status in (401, 503), body[:300]
        _assert_refused_cleanly(status, headers, body)
        grown_mib = (_peak_rss_kib(server.pid) - before) / 1024
        assert grown_mib < 12, f"reading the key set took {grown_mib:.0f} MiB"
        assert "Traceback" not in server.stderr, server.stderr[-3000:]
        # The issuer mends its keys: the server takes them at its next fetch.
        issuer.jwks = issuer.good_jwks
        deadline = time.monotonic() + 20
        while _post(server.url, b"Bearer " + token)[0] != 200:
            assert time.monotonic() < deadline, server.stderr[-3000:]
            time.sleep(0.2)
        assert "Traceback" not in server.stderr, server.stderr[-3000:]
    finally:
        issuer.jwks = issuer.good_jwks
        server.stop()


@pytest.mark.slow
@pytest.mark.parametrize(
    "metadata",
    [
        b'{"issuer": {"nested": ' + b"[" * 100_000 + b"]" * 100_000 + b"}}",
        b'{"issuer": "' + b"x" * 4_000_000 + b'"}',
        b'{"issuer": ISSUER, "jwks_uri": ["http://127.0.0.1:9/jwks"]}',
    ],
    ids=["nested deep", "4 MB", "jwks_uri a list"],
)
def test_hostile_issuer_metadata_is_a_clean_503(metadata: bytes, issuer: Issuer) -> None:
    server = HttpProcess("--oauth-issuer", issuer.url, *UNBOUNDED)
    try:
        token = issuer.token(server.url).encode()
        issuer.metadata = metadata.replace(b"ISSUER", json.dumps(issuer.url).encode())
        status, _, body = _post(server.url, b"Bearer " + token)
        assert status == 503, body[:300]
        assert len(json.loads(body)["error"]["message"]) < 600
        assert "Traceback" not in server.stderr, server.stderr[-3000:]
        assert max(len(line) for line in server.lines) < 2000, "a log line echoes the body"
    finally:
        issuer.metadata = None
        server.stop()
