"""A client that never reads must not make a server grow without bound (issue 18).

Each transport is flooded, over real pipes and sockets, by a reader that stops reading:
the stdio server and the HTTP server streaming progress, and the gateway over stdio and
over HTTP relaying a child that logs as fast as it can. The server's RSS (read from
/proc/<pid>/status) is sampled until it has gone quiet (no CPU used for a while) or a
deadline passes, and must stay under a bound; then the answers are read: they are never
dropped, only notifications are. Before the bounds these reached 0.2 to 5 GB.
"""

from __future__ import annotations

import json
import os
import re
import select
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
from gateway.gateway_helpers import gateway_env, launch_http, stop, write_config

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Linux /proc")

ROOT = Path(__file__).resolve().parents[2]
PY = sys.executable
EVERYTHING = ["--serve", str(ROOT / "examples/everything_server.py")]
CHILD = ROOT / "tests/gateway/servers/framing_child.py"
MB = 1024 * 1024
#: How much a flooded server may grow over its size when the flood starts: the default
#: --send-buffer-bytes (8 MiB) per stream, and room for the allocator.
STDIO_BOUND = 60 * MB
HTTP_BOUND = 250 * MB
QUIET_SECONDS = 1.5
DEADLINE = 60.0  # within the suite's 120 s per test
INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 0,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "never-reads", "version": "1"},
    },
}
INITIALIZED = {"jsonrpc": "2.0", "method": "notifications/initialized"}


def call(request_id: int, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "id": request_id,
        "method": "tools/call",
        "params": {"name": name, "arguments": arguments, "_meta": {"progressToken": request_id}},
    }


def rss(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    raise AssertionError(f"no VmRSS for {pid}")


def cpu_ticks(pids: list[int]) -> int:
    total = 0
    for pid in pids:
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        except (FileNotFoundError, ProcessLookupError):
            continue
        total += int(fields[11]) + int(fields[12])  # utime, stime
    return total


def descendants(pid: int) -> list[int]:
    """`pid` and every process below it (the gateway's children)."""
    found = [pid]
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except (FileNotFoundError, ProcessLookupError):
                continue
            if int(fields[1]) in found:
                found.append(int(entry.name))
    return found


def peak_until_quiet(pid: int, baseline: int, bound: int) -> int:
    """Sample `pid`'s RSS until it and its children used no CPU for QUIET_SECONDS (the
    flood is over, or stalled by backpressure) or DEADLINE passes; fail as soon as it
    grows past the bound. Returns the peak growth."""
    peak = 0
    quiet_since = time.monotonic()
    ticks = -1
    deadline = time.monotonic() + DEADLINE
    while time.monotonic() < deadline:
        growth = rss(pid) - baseline
        peak = max(peak, growth)
        assert growth < bound, f"RSS grew by {growth // MB} MB (bound {bound // MB})"
        now_ticks = cpu_ticks(descendants(pid))
        if now_ticks != ticks:
            ticks, quiet_since = now_ticks, time.monotonic()
        elif time.monotonic() - quiet_since > QUIET_SECONDS:
            break
        time.sleep(0.1)
    print(f"peak RSS growth: {peak // MB} MB")
    return peak


class NeverReads:
    """A stdio peer that writes and does not read stdout until told to."""

    def __init__(self, argv: list[str], env: dict[str, str] | None = None) -> None:
        self.process = subprocess.Popen(
            argv,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env=env,
        )
        self._buffer = b""

    def send(self, *messages: dict[str, Any]) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(b"".join(json.dumps(m).encode() + b"\n" for m in messages))
        self.process.stdin.flush()

    def read(self, timeout: float = 60.0) -> dict[str, Any]:
        assert self.process.stdout is not None
        fd = self.process.stdout.fileno()
        deadline = time.monotonic() + timeout
        while b"\n" not in self._buffer:
            left = deadline - time.monotonic()
            assert left > 0 and select.select([fd], [], [], left)[0], "no answer in time"
            chunk = os.read(fd, 1 << 20)
            assert chunk, "the server closed stdout"
            self._buffer += chunk
        line, _, self._buffer = self._buffer.partition(b"\n")
        return dict(json.loads(line))

    def answers(self, ids: set[int]) -> tuple[dict[int, dict[str, Any]], int]:
        """Read until every id in `ids` is answered: the answers, and how many
        notifications came before them."""
        found: dict[int, dict[str, Any]] = {}
        notifications = 0
        while set(found) != ids:
            message = self.read()
            if "id" in message and "method" not in message:
                found[message["id"]] = message
            else:
                notifications += 1
        return found, notifications

    def close(self) -> None:
        self.process.kill()
        self.process.wait()


@pytest.fixture
def peers() -> Iterator[list[NeverReads]]:
    started: list[NeverReads] = []
    yield started
    for peer in started:
        peer.close()


@pytest.mark.slow
def test_the_stdio_server_streaming_to_a_client_that_never_reads(
    peers: list[NeverReads],
) -> None:
    peer = NeverReads([PY, str(ROOT / "cmd/mcp"), *EVERYTHING])
    peers.append(peer)
    peer.send(INITIALIZE)
    assert peer.read()["id"] == 0
    baseline = rss(peer.process.pid)
    calls = range(1, 11)
    peer.send(INITIALIZED, *(call(n, "stream_progress", {"count": 100_000}) for n in calls))
    peak_until_quiet(peer.process.pid, baseline, STDIO_BOUND)
    answers, progress = peer.answers(set(calls))
    assert all("result" in answer for answer in answers.values()), answers
    assert progress < 10 * 100_000  # some were shed: what waited for us was bounded


@pytest.mark.slow
def test_the_gateway_over_stdio_relaying_a_flood_to_a_client_that_never_reads(
    tmp_path: Path, peers: list[NeverReads]
) -> None:
    config = write_config(tmp_path, {"f": {"command": PY, "args": [str(CHILD)]}})
    peer = NeverReads([PY, str(ROOT / "cmd/mcp")], env=gateway_env(config))
    peers.append(peer)
    peer.send(INITIALIZE)
    assert peer.read()["id"] == 0
    baseline = rss(peer.process.pid)
    peer.send(INITIALIZED, call(1, "f__flood", {"count": 200_000, "size": 1024}))
    peak_until_quiet(peer.process.pid, baseline, STDIO_BOUND)
    answers, _ = peer.answers({1})
    assert answers[1]["result"]["content"][0]["text"] == "flooded"


# -- HTTP: clients that POST a streaming call and never read the response ------------------


def post_and_never_read(url: str, session: str | None, body: dict[str, Any]) -> socket.socket:
    parts = urlsplit(url)
    sock = socket.create_connection((parts.hostname, parts.port))
    data = json.dumps(body).encode()
    headers = [
        f"POST {parts.path} HTTP/1.1",
        f"Host: {parts.netloc}",
        "Content-Type: application/json",
        "Accept: application/json, text/event-stream",
        "MCP-Protocol-Version: 2025-06-18",
        f"Content-Length: {len(data)}",
    ]
    if session:
        headers.append(f"Mcp-Session-Id: {session}")
    sock.sendall(("\r\n".join(headers) + "\r\n\r\n").encode() + data)
    return sock


def read_until(sock: socket.socket, marker: bytes, timeout: float = 60.0) -> bytes:
    """What the socket gives until `marker` shows up in it, or the peer closes."""
    sock.settimeout(timeout)
    data = bytearray()
    searched = 0
    while data.find(marker, searched) < 0:
        searched = max(0, len(data) - len(marker))
        chunk = sock.recv(1 << 20)
        if not chunk:
            break
        data += chunk
    return bytes(data)


def answer_of(request_id: int) -> bytes:
    return b'{"jsonrpc":"2.0","id":%d,"result"' % request_id


def open_session(url: str) -> str:
    """initialize (read in full), then initialized: the session id."""
    sock = post_and_never_read(url, None, INITIALIZE)
    sock.settimeout(30)
    head = b""
    while b"\r\n\r\n" not in head:
        chunk = sock.recv(65536)
        assert chunk, "no answer to initialize"
        head += chunk
    sock.close()
    for line in head.split(b"\r\n"):
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"mcp-session-id":
            session = value.strip().decode()
            post_and_never_read(url, session, INITIALIZED).close()
            return session
    raise AssertionError(f"no session id in {head[:500]!r}")


@pytest.fixture
def sockets() -> Iterator[list[socket.socket]]:
    opened: list[socket.socket] = []
    yield opened
    for sock in opened:
        sock.close()


@pytest.mark.slow
def test_the_http_server_streaming_to_clients_that_never_read(
    sockets: list[socket.socket],
) -> None:
    process, url = launch_http(*EVERYTHING)
    try:
        session = open_session(url)
        baseline = rss(process.pid)
        for n in range(1, 11):
            body = call(n, "stream_progress", {"count": 30_000})
            sockets.append(post_and_never_read(url, session, body))
        peak_until_quiet(process.pid, baseline, HTTP_BOUND)
        # Notifications were shed; the answer was not.
        assert answer_of(1) in read_until(sockets[0], answer_of(1))
    finally:
        stop(process)


@pytest.mark.slow
def test_the_gateway_over_http_relaying_a_flood_to_a_client_that_never_reads(
    tmp_path: Path, sockets: list[socket.socket]
) -> None:
    config = write_config(tmp_path, {"f": {"command": PY, "args": [str(CHILD)]}})
    process, url = launch_http(env=gateway_env(config))
    try:
        session = open_session(url)
        baseline = rss(process.pid)
        body = call(1, "f__flood", {"count": 100_000, "size": 1024})
        sock = post_and_never_read(url, session, body)
        sockets.append(sock)
        peak_until_quiet(process.pid, baseline, HTTP_BOUND)
        seen = read_until(sock, answer_of(1))
        assert answer_of(1) in seen and b"flooded" in seen, seen[-500:]
        assert b"notifications/message" in seen  # the flood went this way
    finally:
        stop(process)


@pytest.mark.slow
def test_a_slow_stream_is_closed_and_resumed_with_last_event_id(
    sockets: list[socket.socket],
) -> None:
    """`--slow-client close`: a POST stream whose reader lags is ended; the answer waits in
    the replay buffer, and a GET with Last-Event-ID gets it."""
    process, url = launch_http(
        *EVERYTHING, "--slow-client", "close", "--send-buffer-bytes", "65536"
    )
    try:
        session = open_session(url)
        sock = post_and_never_read(url, session, call(1, "stream_progress", {"count": 50_000}))
        sockets.append(sock)
        peak_until_quiet(process.pid, rss(process.pid), HTTP_BOUND)
        seen = read_until(sock, b"\r\n0\r\n\r\n")  # the end of the chunked response
        assert answer_of(1) not in seen  # the stream ended before the answer
        ids = re.findall(rb"^id: (\S+)$", seen, re.MULTILINE)
        assert ids, seen[:500]
        parts = urlsplit(url)
        get = socket.create_connection((parts.hostname, parts.port))
        sockets.append(get)
        request = [
            f"GET {parts.path} HTTP/1.1",
            f"Host: {parts.netloc}",
            "Accept: text/event-stream",
            "MCP-Protocol-Version: 2025-06-18",
            f"Mcp-Session-Id: {session}",
            f"Last-Event-ID: {ids[-1].decode()}",
        ]
        get.sendall(("\r\n".join(request) + "\r\n\r\n").encode())
        assert answer_of(1) in read_until(get, answer_of(1))
    finally:
        stop(process)


def modern_post_and_never_read(url: str, request_id: int) -> socket.socket:
    """A 2026-07-28 tools/call of stream_progress (no session: the exchange is its stream)."""
    parts = urlsplit(url)
    sock = socket.create_connection((parts.hostname, parts.port))
    meta = {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": {"name": "never-reads", "version": "1"},
        "progressToken": request_id,
    }
    body = {
        "jsonrpc": "2.0",
        "id": request_id,
        "method": "tools/call",
        "params": {"name": "stream_progress", "arguments": {"count": 30_000}, "_meta": meta},
    }
    data = json.dumps(body).encode()
    headers = [
        f"POST {parts.path} HTTP/1.1",
        f"Host: {parts.netloc}",
        "Content-Type: application/json",
        "Accept: application/json, text/event-stream",
        "MCP-Protocol-Version: 2026-07-28",
        "Mcp-Method: tools/call",
        "Mcp-Name: stream_progress",
        f"Content-Length: {len(data)}",
    ]
    sock.sendall(("\r\n".join(headers) + "\r\n\r\n").encode() + data)
    return sock


@pytest.mark.slow
def test_the_http_server_streaming_to_2026_07_28_clients_that_never_read(
    sockets: list[socket.socket],
) -> None:
    process, url = launch_http(*EVERYTHING)
    try:
        baseline = rss(process.pid)
        sockets.extend(modern_post_and_never_read(url, n) for n in range(1, 11))
        peak_until_quiet(process.pid, baseline, HTTP_BOUND)
        assert b'"id":1,"result"' in read_until(sockets[0], b'"id":1,"result"')
    finally:
        stop(process)
