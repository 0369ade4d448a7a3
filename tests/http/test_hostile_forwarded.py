"""The client's own address behind a reverse proxy (issue 39: "a right credential from another
address is never locked out"): behind nginx every client comes from nginx's address, so the
guessing bound, the refusal log and the audit log count them apart only by the client address
nginx forwards, and only when nginx is on --trusted-proxies.

Hostile-input classes (/work/shared/hostile-input.md): "who can reach it" (a client that sends
its own X-Forwarded-For, straight to the server or through the proxy, must not choose its
bucket: not a fresh one, not the operator's), "a limit ... must not lock out a right
credential from elsewhere" (a guesser behind the proxy locks only itself), and "size, depth,
type" (huge, many-hop, garbage, IPv6, odd-byte header values: bounded work, never a 500).

Real nginx (the shipped deploy/nginx/codex-mcp.conf) and real servers on 127.0.0.1; nginx
reaches the server from 127.0.0.1, clients come from 127.0.0.2 and up."""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from codex_mcp.transports.http.client_address import MOST_HOPS, ClientAddresses
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
from nginx_proxy import NginxProxies, shipped_config
from raw_http import INIT_BODY, read_reply, request_bytes

#: The shipped config sets X-Forwarded-For to the address nginx got the request from; this
#: variant appends it to what the client sent (the form for nginx behind another proxy).
APPENDING = ("X-Forwarded-For $remote_addr;", "X-Forwarded-For $proxy_add_x_forwarded_for;")
PROXY = "127.0.0.1"  # where nginx's connections to the server come from


def nginx_config(base: str, appending: bool) -> str:
    config = shipped_config([base])
    assert APPENDING[0] in config, "the shipped config no longer sets X-Forwarded-For"
    return config.replace(*APPENDING) if appending else config


@pytest.fixture(scope="module")
def audit_log(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("audit") / "audit.jsonl"


@pytest.fixture(scope="module")
def trusting(audit_log: Path) -> Iterator[HttpProcess]:
    """A server that believes what nginx forwards (one per module: each test guesses from
    addresses of its own)."""
    process = HttpProcess(
        "--bearer-token", TOKEN, "--trusted-proxies", PROXY, "--audit-log", str(audit_log)
    )
    yield process
    process.stop()


@pytest.fixture(scope="module")
def untrusting() -> Iterator[HttpProcess]:
    process = HttpProcess("--bearer-token", TOKEN)
    yield process
    process.stop()


@pytest.fixture(scope="module")
def direct() -> Iterator[HttpProcess]:
    """A server trusting 127.0.0.1 for the tests that talk to it straight: apart from the one
    behind nginx, so that the failures of all the tests together stay under the bound from
    all addresses (guessing.IN_ALL_FACTOR times the bound), past which a guesser's first
    failure locks it."""
    process = HttpProcess("--bearer-token", TOKEN, "--trusted-proxies", PROXY)
    yield process
    process.stop()


@pytest.fixture(scope="module")
def proxies(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Callable[[str, bool], str]]:
    """`proxies(base, appending)`: the proxied /mcp URL of nginx in front of `base`, each
    started once for the module."""
    started: dict[tuple[str, bool], str] = {}
    with NginxProxies(tmp_path_factory.mktemp("nginx")) as nginx:

        def proxy(base: str, appending: bool = False) -> str:
            if (base, appending) not in started:
                started[base, appending] = nginx.start(nginx_config(base, appending))
            return started[base, appending]

        yield proxy


# -- behind nginx ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("appending", "guesser", "operator"),
    [(False, "127.0.0.2", "127.0.0.3"), (True, "127.0.0.4", "127.0.0.5")],
    ids=["as-shipped", "appending"],
)
async def test_behind_nginx_a_guesser_locks_only_its_own_address(
    trusting: HttpProcess,
    proxies: Callable[[str, bool], str],
    audit_log: Path,
    appending: bool,
    guesser: str,
    operator: str,
) -> None:
    """A guesser behind nginx, naming a new address of its own in X-Forwarded-For with every
    guess, is locked after the bound; a right token from another client of the same nginx is
    served throughout. The audit log names the guesser by its own address, never nginx's and
    never the one it forged."""
    url = proxies(trusting.base, appending)
    guesses, served = await asyncio.gather(
        guess_for(1.0, url, guesser, forge=True), served_for(1.0, url, operator)
    )
    assert_locked_after_the_bound(guesses)
    assert served and set(served) == {200}, served  # the operator, throughout
    clients = refused_clients(audit_log)  # written before each refusal was answered
    assert guesser in clients and operator not in clients, clients
    assert PROXY not in clients and not any(c.startswith("198.51.100.") for c in clients), clients
    # The refusal log (its first 20 lines in 10 s: the first guesser's) names them alike.
    trusting.wait_for_line(r"refused POST /mcp from 127\.0\.0\.[24]: 401")
    named = set(re.findall(r"refused POST /mcp from (\S+):", trusting.stderr))
    assert named <= {"127.0.0.2", "127.0.0.4"}, named


def refused_clients(audit_log: Path) -> set[str]:
    """The client addresses of the audit log's refusals."""
    lines = [json.loads(line) for line in audit_log.read_text().splitlines()]
    return {line["client"] for line in lines if line.get("event") == "refused"}


async def test_behind_nginx_without_the_setting_a_guesser_locks_out_every_client_and_it_is_said(
    untrusting: HttpProcess, proxies: Callable[[str, bool], str]
) -> None:
    """The control: without --trusted-proxies every client of nginx is nginx's address, so the
    guesser's failures lock the operator out too (what the setting is for), and the server
    says so, once, naming the setting. Straight to the server the operator is served."""
    url = proxies(untrusting.base, False)
    async with client("127.0.0.6") as guessing:
        for n in range(BOUND):
            headers = {**JSON, **bearer(f"guess-{n}")}
            async with guessing.post(url, json=init(), headers=headers) as refused:
                assert refused.status == 401
    async with client("127.0.0.7") as operator:
        async with operator.post(url, json=init(), headers={**JSON, **bearer(TOKEN)}) as locked:
            assert_no_verdict(locked.status, locked.headers, await locked.text())
        headers = {**JSON, **bearer(TOKEN)}
        async with operator.post(untrusting.url, json=init(), headers=headers) as direct:
            assert direct.status == 200
    untrusting.wait_for_line("X-Forwarded-For from 127.0.0.1 is ignored")
    said = [line for line in untrusting.lines if "X-Forwarded-For from 127.0.0.1 " in line]
    assert len(said) == 1, said
    assert "--trusted-proxies 127.0.0.1" in said[0], said


# -- straight to the server: a forged header is nobody's word ---------------------------------


@pytest.mark.parametrize("trusted", [False, True], ids=["no-setting", "nginx-trusted"])
async def test_a_forged_header_sent_straight_to_the_server_chooses_no_bucket(
    direct: HttpProcess, untrusting: HttpProcess, trusted: bool
) -> None:
    """A guesser that reaches the server itself (not through the trusted proxy) and names a
    new address in X-Forwarded-For with every guess stays in its own bucket; naming the
    operator's address does not lock the operator out."""
    server = direct if trusted else untrusting
    guesser, operator = ("127.0.0.8", "127.0.0.9") if trusted else ("127.0.0.10", "127.0.0.11")
    guesses = await guess_for(0.5, server.url, guesser, forge=True)
    assert_locked_after_the_bound(guesses)
    async with client("127.0.0.12" if trusted else "127.0.0.13") as framing:
        for n in range(BOUND + 2):  # wrong tokens "from" the operator's address
            headers = {**JSON, **bearer(f"frame-{n}"), "X-Forwarded-For": operator}
            async with framing.post(server.url, json=init(), headers=headers) as r:
                assert r.status in (401, 429)
    async with (
        client(operator) as own,
        own.post(server.url, json=init(), headers={**JSON, **bearer(TOKEN)}) as served,
    ):
        assert served.status == 200, await served.text()


# -- hostile values from the trusted proxy ----------------------------------------------------


async def send_from_proxy(port: int, headers: list[tuple[str, bytes]], token: str) -> int:
    """One POST from the trusted proxy's address, carrying `headers` as given (repeats too)."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port, local_addr=(PROXY, 0))
    try:
        head = request_bytes("POST", "/mcp", {**JSON, **bearer(token)}, INIT_BODY, port)
        top, _, rest = head.partition(b"\r\n")
        extra = b"".join(name.encode() + b": " + value + b"\r\n" for name, value in headers)
        writer.write(top + b"\r\n" + extra + rest)
        await writer.drain()
        return (await read_reply(reader)).status
    finally:
        writer.close()


HOSTILE: list[list[tuple[str, bytes]]] = [
    [("X-Forwarded-For", value)]
    for value in (
        b"",
        b" ",
        b",,,",
        b"unknown",
        b"_hidden, unknown",
        b"not an address",
        b"1.2.3.4 5.6.7.8",
        b"999.1.1.1",
        b"198.51.100.1:4711",
        b"[2001:db8::1]:443",
        b"[2001:db8::1",
        b" 2001:db8::1 ",
        b"fe80::1%eth0",
        b"::ffff:198.51.100.2",
        b"198.51.100.3\x01",
        b"\xff\xfe198.51.100.4",
        b"198.51.100.5, " * 500,  # many hops, under the header size limit
        b"x" * 8000,  # one huge hop
        b"1," * 6000,  # over the header size limit: aiohttp's 400
    )
] + [
    [("X-Forwarded-For", b"198.51.100.6")] * 40,  # the header repeated
    [("Forwarded", b"for=198.51.100.7"), ("X-Real-IP", b"198.51.100.8")],  # neither is read
]


async def test_hostile_forwarded_values_from_the_trusted_proxy_are_bounded_and_never_a_500(
    direct: HttpProcess,
) -> None:
    port = int(direct.base.rsplit(":", 1)[1])
    for headers in HOSTILE:
        status = await send_from_proxy(port, headers, "a wrong token")
        assert status in (400, 401, 429), (status, headers[0][1][:60])
    # Every value was answered, the server still serves, and said nothing of an error.
    assert await send_from_proxy(port, [("X-Forwarded-For", b"198.51.100.9")], TOKEN) == 200
    assert "Traceback" not in direct.stderr and " 500 " not in direct.stderr


async def test_the_bucket_is_the_rightmost_address_the_trusted_proxy_did_not_vouch_for(
    direct: HttpProcess,
) -> None:
    """What the trusted proxy says, read as nginx writes it: the rightmost hop not on the
    list is the client; what a client wrote to the left of it changes nothing; IPv6 counts by
    /64 like a peer's address."""
    port = int(direct.base.rsplit(":", 1)[1])

    async def status(forwarded: str, token: str = "a wrong token") -> int:
        return await send_from_proxy(port, [("X-Forwarded-For", forwarded.encode())], token)

    for n in range(BOUND):
        assert await status(f"203.0.113.{n}, 192.0.2.50") == 401  # the left part: forged
    assert await status("192.0.2.50", TOKEN) == 429  # the client named last is locked
    assert await status("garbage, 192.0.2.50, 127.0.0.1") == 429  # past a trusted hop too
    assert await status("192.0.2.50, 192.0.2.51", TOKEN) == 200  # another client is served
    for n in range(BOUND):
        assert await status(f"[2001:db8:0:7::{n + 1}]:443") == 401
    assert await status("2001:db8:0:7::ffff", TOKEN) == 429  # the same /64
    assert await status("2001:db8:0:8::1", TOKEN) == 200  # the next /64


# -- the walk itself ---------------------------------------------------------------------------

TRUSTED = ClientAddresses(["127.0.0.1", "10.0.0.0/8", "::1"])


@pytest.mark.parametrize(
    ("peer", "forwarded", "client_address"),
    [
        ("192.0.2.1", ["198.51.100.1"], "192.0.2.1"),  # an untrusted peer's header: ignored
        ("127.0.0.1", [], "127.0.0.1"),  # the proxy's own request (a probe)
        ("127.0.0.1", ["198.51.100.1"], "198.51.100.1"),
        ("127.0.0.1", ["203.0.113.9, 198.51.100.1"], "198.51.100.1"),  # the rightmost
        ("127.0.0.1", ["198.51.100.1, 10.0.0.5"], "198.51.100.1"),  # past a trusted hop
        ("127.0.0.1", ["198.51.100.1", "10.0.0.5"], "198.51.100.1"),  # over repeated headers
        ("127.0.0.1", ["10.0.0.5, 10.0.0.6"], "10.0.0.5"),  # all trusted: the leftmost
        ("127.0.0.1", ["garbage, 198.51.100.1"], "198.51.100.1"),
        ("127.0.0.1", ["198.51.100.1, garbage"], "127.0.0.1"),  # unnamed: who said it
        ("127.0.0.1", ["198.51.100.1, 10.0.0.5, unknown"], "127.0.0.1"),
        ("127.0.0.1", ["unknown"], "127.0.0.1"),
        ("127.0.0.1", [""], "127.0.0.1"),
        ("127.0.0.1", [" , ,"], "127.0.0.1"),
        ("127.0.0.1", ["198.51.100.1:4711"], "198.51.100.1"),
        ("127.0.0.1", ["[2001:db8::1]:443"], "2001:db8::1"),
        ("127.0.0.1", ["[2001:db8::1]"], "2001:db8::1"),
        ("127.0.0.1", ["[2001:db8::1"], "127.0.0.1"),
        ("127.0.0.1", ["[2001:db8::1]x"], "127.0.0.1"),
        ("127.0.0.1", ["\t2001:db8::1 "], "2001:db8::1"),
        ("127.0.0.1", ["fe80::1%eth0"], "fe80::1"),  # no zone: it would be a new bucket each
        ("127.0.0.1", ["::ffff:198.51.100.1"], "198.51.100.1"),
        ("127.0.0.1", ["198.51.100.1, ::ffff:10.0.0.5"], "198.51.100.1"),  # mapped: trusted
        ("::ffff:127.0.0.1", ["198.51.100.1"], "198.51.100.1"),  # a dual-stack listener
        ("::1", ["2001:db8::1"], "2001:db8::1"),
        ("127.0.0.1", ["999.1.1.1"], "127.0.0.1"),
        ("127.0.0.1", ["1.2.3.4 5.6.7.8"], "127.0.0.1"),
        ("127.0.0.1", ["198.51.100.1\x00"], "127.0.0.1"),
        ("127.0.0.1", ["\udcff198.51.100.1"], "127.0.0.1"),  # non-UTF-8 bytes, as aiohttp has them
        ("127.0.0.1", ["x" * 100_000], "127.0.0.1"),
        ("127.0.0.1", ["10.0.0.1, " * 5000 + "198.51.100.1"], "198.51.100.1"),
        ("127.0.0.1", ["198.51.100.1, " + "10.0.0.1, " * 5000 + "10.0.0.2"], "10.0.0.1"),
        (None, ["198.51.100.1"], None),  # no peer address (a Unix socket)
        ("not an address", ["198.51.100.1"], "not an address"),
    ],
)
def test_the_client_address_walk(
    peer: str | None, forwarded: list[str], client_address: str | None
) -> None:
    assert TRUSTED.of(peer, forwarded) == client_address


def test_the_walk_stops_after_most_hops_of_trusted_proxies() -> None:
    chain = ", ".join(f"10.0.{n}.1" for n in range(2 * MOST_HOPS))
    assert TRUSTED.of("127.0.0.1", [chain]) == f"10.0.{MOST_HOPS}.1"
    assert ClientAddresses([]).of("127.0.0.1", ["198.51.100.1"]) == "127.0.0.1"


def test_an_ignored_header_is_said_once_per_peer_for_a_few_peers(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """A client forging the header straight to the server cannot hide the line about the
    proxy (each peer has its own), nor write more than a few lines however many it uses."""
    untrusting = ClientAddresses([])
    with caplog.at_level("WARNING", logger="codex_mcp.http"):
        for _ in range(2):
            for n in range(40):
                assert untrusting.of(f"192.0.2.{n}", ["198.51.100.1"]) == f"192.0.2.{n}"
    said = [r.getMessage() for r in caplog.records if "X-Forwarded-For" in r.getMessage()]
    assert said == [
        f"X-Forwarded-For from 192.0.2.{n} is ignored: 192.0.2.{n} is not on --trusted-proxies, "
        f"so every client it forwards counts as 192.0.2.{n} (one guessing bound, one name in "
        f"the logs); if it is your reverse proxy, start with --trusted-proxies 192.0.2.{n}"
        for n in range(8)
    ]
