"""Readers that lag show in /metrics: a real flood (the examples' stream_progress) to an SSE
reader that never reads, then the counters of dropped notifications (--slow-client drop)
and of streams closed (--slow-client close), scraped and read with prometheus_client's
parser. The answer itself is never dropped."""

from __future__ import annotations

import asyncio
import json
import socket
import time
from urllib.parse import urlsplit

import aiohttp
from http_helpers import open_session
from http_process import HttpProcess
from observe_helpers import ROOT, Samples, scrape, value

EVERYTHING = ("--serve", str(ROOT / "examples/everything_server.py"))
BOUND = "65536"


def post_and_never_read(url: str, session: dict[str, str], request_id: int) -> socket.socket:
    """A streaming tools/call on a socket whose reader stops at once (a small receive
    buffer, so the server's own queue is what fills)."""
    parts = urlsplit(url)
    sock = socket.socket()
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    sock.connect((parts.hostname, parts.port))
    params = {
        "name": "stream_progress",
        "arguments": {"count": 30_000},
        "_meta": {"progressToken": request_id},
    }
    body = json.dumps(
        {"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": params}
    ).encode()
    head = [f"POST {parts.path} HTTP/1.1", f"Host: {parts.netloc}"]
    head += [f"{name}: {text}" for name, text in session.items()]
    head.append(f"Content-Length: {len(body)}")
    sock.sendall(("\r\n".join(head) + "\r\n\r\n").encode() + body)
    return sock


def read_until(sock: socket.socket, marker: bytes, timeout: float = 60.0) -> bytes:
    sock.settimeout(timeout)
    data = bytearray()
    while marker not in data[-(1 << 21) :]:
        chunk = sock.recv(1 << 20)
        if not chunk:
            break
        data += chunk
    return bytes(data)


async def scrape_until(url: str, name: str, deadline: float = 60.0) -> Samples:
    """Scrape until the counter `name` is above zero (the flood has filled the queue)."""
    until = time.monotonic() + deadline
    while True:
        samples = await scrape(url)
        if value(samples, name) > 0:
            return samples
        assert time.monotonic() < until, f"{name} stayed 0"
        await asyncio.sleep(0.1)


async def flooded(*options: str) -> tuple[Samples, bytes]:
    """Flood one never-read POST stream on a server started with `options`; the samples
    once something was shed or closed, and what the stream carried in the end."""
    server = HttpProcess(*EVERYTHING, "--send-buffer-bytes", BOUND, *options)
    sock = None
    try:
        async with aiohttp.ClientSession() as http:
            session = await open_session(http, server.url)
        metrics = f"{server.base}/metrics"
        closing = "close" in options
        counter = (
            "codex_mcp_sse_streams_closed_slow_total"
            if closing
            else "codex_mcp_sse_events_dropped_total"
        )
        sock = post_and_never_read(server.url, session, 7)
        await scrape_until(metrics, counter)
        seen = await asyncio.to_thread(
            read_until, sock, b"\r\n0\r\n\r\n" if closing else b'"id":7,"result"'
        )
        return await scrape(metrics), seen
    finally:
        if sock is not None:
            sock.close()
        server.stop()


async def test_notifications_dropped_for_a_reader_that_lags_are_counted() -> None:
    samples, seen = await flooded()
    dropped = value(samples, "codex_mcp_sse_events_dropped_total")
    assert dropped > 0
    assert value(samples, "codex_mcp_sse_dropped_bytes_total") > dropped * 50
    assert value(samples, "codex_mcp_sse_streams_closed_slow_total") == 0
    assert b'"id":7,"result"' in seen  # the answer is never dropped
    delivered = seen.count(b"notifications/progress")
    assert delivered + dropped <= 30_000 and delivered < 30_000


async def test_streams_closed_for_a_reader_that_lags_are_counted() -> None:
    samples, seen = await flooded("--slow-client", "close")
    assert value(samples, "codex_mcp_sse_streams_closed_slow_total") == 1
    assert value(samples, "codex_mcp_sse_events_dropped_total") == 0
    assert b'"id":7,"result"' not in seen  # the stream ended first; resumable instead
