"""Connections that send nothing, or send too slowly, are closed; a cap on open
connections keeps /healthz answering; accept() failures are logged once, not per retry.
Over serve_http itself (in this loop), and a real `codex-mcp-http` with few descriptors."""

from __future__ import annotations

import asyncio
import contextlib
import resource
import select
import socket
import subprocess
import sys
import time
from typing import Any

import aiohttp
import pytest
from codex_mcp.transports.http.connections import PROBE_RESERVE
from gate import Gate
from http_process import ROOT, HttpProcess
from raw_http import (
    INIT_BODY,
    closed_by_server,
    initialize,
    read_reply,
    request_bytes,
    send,
)
from served import served

JSON = {"Content-Type": "application/json", "Accept": "application/json"}
Connection = tuple[asyncio.StreamReader, asyncio.StreamWriter]


async def connect(port: int) -> Connection:
    return await asyncio.open_connection("127.0.0.1", port)


async def trickle(writer: asyncio.StreamWriter, data: bytes, chunk: int, every: float) -> None:
    """A slow client: `chunk` bytes every `every` seconds, until done or cut off."""
    with contextlib.suppress(ConnectionError):
        for start in range(0, len(data), chunk):
            writer.write(data[start : start + chunk])
            await writer.drain()
            await asyncio.sleep(every)


async def test_a_connection_that_sends_nothing_gets_408_and_is_closed() -> None:
    async with served(header_timeout=0.5) as port:
        reader, writer = await connect(port)
        opened = time.monotonic()
        answer = await closed_by_server(reader, timeout=10)
        assert answer.startswith(b"HTTP/1.1 408 Request Timeout"), answer
        assert time.monotonic() - opened >= 0.45
        writer.close()


async def test_headers_that_keep_trickling_in_are_cut_off() -> None:
    async with served(header_timeout=0.5) as port:
        reader, writer = await connect(port)
        request = request_bytes("POST", "/mcp", {**JSON, "X-Padding": "x" * 200}, INIT_BODY, port)
        slow = asyncio.create_task(trickle(writer, request, chunk=2, every=0.05))  # ~6 s in all
        answer = await closed_by_server(reader, timeout=10)
        assert answer.startswith(b"HTTP/1.1 408"), answer
        assert not slow.done()  # cut off while still sending
        slow.cancel()
        writer.close()


async def test_a_body_that_stalls_gets_408_and_the_connection_closes() -> None:
    async with served(body_timeout=0.5) as port:
        reader, writer = await connect(port)
        request = request_bytes("POST", "/mcp", JSON, INIT_BODY, port)
        writer.write(request[: -len(INIT_BODY) // 2])  # headers and half the body, then nothing
        reply = await read_reply(reader)
        assert reply.status == 408
        assert reply.json()["error"]["code"] == -32000
        assert "stalled" in reply.json()["error"]["message"]
        assert reply.headers["connection"] == "close"
        assert await closed_by_server(reader, timeout=5) == b""
        writer.close()


async def test_an_answer_given_before_its_body_was_read_leaves_the_connection_idle() -> None:
    """A request answered without its body being read (here a 404 with a large body still
    coming): the rest of that body is not the next request's headers, so the kept-alive
    connection is not told 408 once header_timeout has passed, and serves the next one."""
    async with served(header_timeout=0.5, idle_timeout=30) as port:
        reader, writer = await connect(port)
        keep = {**JSON, "Connection": "keep-alive"}
        writer.write(request_bytes("POST", "/no-such-path", keep, b"x" * 600_000, port))
        assert (await read_reply(reader)).status == 404
        with pytest.raises(TimeoutError):  # three header timeouts pass: nothing is sent
            await asyncio.wait_for(reader.read(1), timeout=1.5)
        writer.write(request_bytes("POST", "/mcp", keep, INIT_BODY, port))
        reply = await read_reply(reader)
        assert reply.status == 200, reply
        assert "mcp-session-id" in reply.headers
        writer.close()


async def test_a_slow_body_that_keeps_coming_is_read() -> None:
    async with served(body_timeout=0.6, body_min_rate=50) as port:
        reader, writer = await connect(port)
        request = request_bytes("POST", "/mcp", JSON, INIT_BODY, port)
        head, body = request[: -len(INIT_BODY)], INIT_BODY
        writer.write(head)
        # The whole body takes longer than body_timeout; no pause between reads does, and
        # it comes at some 140 bytes/s, above the minimum.
        await trickle(writer, body, chunk=len(body) // 5 + 1, every=0.2)
        reply = await read_reply(reader)
        assert reply.status == 200, reply
        assert "mcp-session-id" in reply.headers
        writer.close()


async def test_a_body_that_trickles_in_without_stalling_is_cut_off() -> None:
    """A byte every 0.1 s never stalls for body_timeout, but comes at 10 bytes/s: once
    body_timeout has passed, a body slower than body_min_rate gets 408."""
    async with served(body_timeout=1, body_min_rate=100) as port:
        reader, writer = await connect(port)
        writer.write(
            request_bytes("POST", "/mcp", JSON, b"", port).replace(
                b"Content-Length: 0", b"Content-Length: %d" % len(INIT_BODY)
            )
        )
        slow = asyncio.create_task(trickle(writer, INIT_BODY, chunk=1, every=0.1))
        reply = await read_reply(reader)
        assert reply.status == 408, reply
        assert "slower than 100 bytes/s" in reply.json()["error"]["message"]
        assert not slow.done()  # cut off while still sending
        assert await closed_by_server(reader, timeout=5) == b""
        slow.cancel()
        writer.close()


async def readyz(port: int) -> tuple[int, dict[str, Any]]:
    reply = await send(port, request_bytes("GET", "/readyz", port=port))
    return reply.status, reply.json()


@pytest.mark.slow
async def test_trickling_bodies_cannot_hold_the_connection_cap_and_readyz_says_when_full() -> None:
    """Every connection trickling a body: new requests get 503 and /readyz says why (not
    "ready"); the trickles are cut off by the minimum body rate, and the server is ready
    again. (Seen: 16,000 such connections held a 15,000 cap for ever.)"""
    cap = 4
    async with served(max_connections=cap, body_timeout=5, body_min_rate=50) as port:
        assert (await readyz(port))[1]["max_connections"] == cap
        head = request_bytes("POST", "/mcp", JSON, b"", port).replace(
            b"Content-Length: 0", b"Content-Length: %d" % len(INIT_BODY)
        )
        trickles = []
        for _ in range(cap):
            reader, writer = await connect(port)
            writer.write(head)
            trickles.append(
                (
                    reader,
                    writer,
                    asyncio.create_task(
                        trickle(writer, INIT_BODY, chunk=1, every=0.2)  # 5 bytes/s, never a stall
                    ),
                )
            )
        async with asyncio.timeout(10):
            while (answer := await readyz(port))[0] != 503:
                await asyncio.sleep(0.02)
        assert answer[1]["status"] == "connection cap reached", answer
        assert answer[1]["connections"] >= cap
        refused = await send(port, request_bytes("POST", "/mcp", JSON, INIT_BODY, port))
        assert (
            refused.status == 503 and "Too many connections" in refused.json()["error"]["message"]
        )
        for reader, writer, slow in trickles:
            reply = await read_reply(reader, timeout=20)
            assert reply.status == 408 and not slow.done(), reply
            slow.cancel()
            writer.close()
        async with asyncio.timeout(10):
            while (answer := await readyz(port))[0] != 200:
                await asyncio.sleep(0.02)
        assert answer[1]["status"] == "ready"
        assert (
            await send(port, request_bytes("POST", "/mcp", JSON, INIT_BODY, port))
        ).status == 200


def keep_sending_after_the_answer(port: int, head: bytes, extra_sends: int) -> bytes:
    """A slow client on a blocking socket: trickles its body until an answer is there to
    read, sends `extra_sends` more bytes without reading it (it is busy, or slow), then
    reads everything until the server closes."""
    with socket.create_connection(("127.0.0.1", port), timeout=30) as sock:
        sock.sendall(head)
        deadline = time.monotonic() + 20
        while not select.select([sock], [], [], 0.1)[0]:  # nothing to read yet
            assert time.monotonic() < deadline, "no answer to a body far too slow"
            sock.sendall(b" ")
        for _ in range(extra_sends):
            sock.sendall(b" ")  # a reset here is the defect this guards against
            select.select([], [], [], 0.05)  # the trickle's pace, not a wait for a condition
        answer = b""
        while chunk := sock.recv(65536):
            answer += chunk
        return answer


async def test_a_client_still_sending_after_its_408_can_read_it() -> None:
    """A body cut for being too slow is answered 408, then the server half-closes and
    drops what still comes for a moment instead of closing at once: closed at once, the
    client's next bytes draw a TCP reset that can wipe the unread 408 (a slow client on a
    loaded machine saw ECONNRESET instead of its answer)."""
    async with served(body_timeout=0.5, body_min_rate=10_000) as port:
        head = request_bytes("POST", "/mcp", JSON, b"", port).replace(
            b"Content-Length: 0", b"Content-Length: 100000"
        )
        answer = await asyncio.to_thread(keep_sending_after_the_answer, port, head, 10)
        assert answer.startswith(b"HTTP/1.1 408 Request Timeout"), answer
        assert b"slower than 10000 bytes/s" in answer


async def test_an_idle_keep_alive_connection_is_closed() -> None:
    async with served(idle_timeout=0.5) as port:
        reader, writer = await connect(port)
        request = request_bytes("GET", "/healthz", port=port).replace(b"Connection: close", b"X: y")
        writer.write(request)
        assert (await read_reply(reader)).status == 200
        writer.write(request)  # still open for the next request ...
        assert (await read_reply(reader)).status == 200
        assert await closed_by_server(reader, timeout=10) == b""  # ... until it sits idle
        writer.close()


async def test_at_the_cap_new_connections_close_the_oldest_idle_ones() -> None:
    async with served(max_connections=4, header_timeout=60) as port:
        silent = [await connect(port) for _ in range(20)]
        healthz = await send(port, request_bytes("GET", "/healthz", port=port))
        assert healthz.status == 200
        # At most four at once: /healthz and the newest three silent connections.
        for reader, _ in silent[:17]:
            assert await closed_by_server(reader, timeout=10) == b""
        for reader, _ in silent[17:]:
            with pytest.raises(TimeoutError):
                await asyncio.wait_for(reader.read(1), 0.3)
        for _, writer in silent:
            writer.close()


async def read_to_end(port: int, request: bytes) -> bytes:
    reader, writer = await connect(port)
    writer.write(request)
    try:
        return await closed_by_server(reader, timeout=10)
    finally:
        writer.close()


async def test_when_every_connection_is_busy_probes_still_answer() -> None:
    gate = Gate()
    async with served(gate.server().core, max_connections=2, header_timeout=60) as port:
        sid = await initialize(port)
        session = {**JSON, "Mcp-Session-Id": sid, "MCP-Protocol-Version": "2025-06-18"}
        block = b'{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"block"}}'
        busy = [await connect(port) for _ in range(2)]
        for number, (_, writer) in enumerate(busy):
            writer.write(request_bytes("POST", "/mcp", session, block % number, port))
        await gate.until_started(2)

        refused = await read_to_end(port, request_bytes("POST", "/mcp", session, b"{}", port))
        assert refused.startswith(b"HTTP/1.1 503"), refused
        assert b"Retry-After: 1" in refused and b"Too many connections" in refused
        health = await read_to_end(port, request_bytes("GET", "/healthz", port=port))
        assert health.startswith(b"HTTP/1.1 200"), health
        ready = await read_to_end(port, request_bytes("GET", "/readyz", port=port))
        assert ready.startswith(b"HTTP/1.1 503") and b"connection cap reached" in ready, ready

        # Past the probe reserve, a connection is refused before it sends anything.
        reserve = [await connect(port) for _ in range(PROBE_RESERVE)]
        reader, writer = await connect(port)
        refused = await closed_by_server(reader, timeout=10)
        assert refused.startswith(b"HTTP/1.1 503"), refused
        writer.close()
        for _, writer in reserve:
            writer.close()

        gate.open.set()
        for reader, writer in busy:
            reply = await read_reply(reader)
            assert (
                reply.status == 200 and reply.json()["result"]["content"][0]["text"] == "released"
            )
            writer.close()


def start_with_few_descriptors(limit: int, *args: str) -> HttpProcess:
    """`codex-mcp-http` allowed `limit` open files, on asyncio's loop: it reports every
    failed accept() (uvloop's libuv drops those connections quietly), and accepts a whole
    backlog before counting any of it, the harder case for the cap."""

    def few_descriptors() -> None:
        resource.setrlimit(resource.RLIMIT_NOFILE, (limit, limit))

    return HttpProcess("--no-uvloop", *args, preexec_fn=few_descriptors)


def flood(port: int, count: int) -> list[socket.socket]:
    """`count` connections that send nothing; the kernel completes them (backlog)."""
    return [socket.create_connection(("127.0.0.1", port), timeout=10) for _ in range(count)]


def healthz(base: str) -> int:
    async def get() -> int:
        async with aiohttp.ClientSession() as http, http.get(f"{base}/healthz") as response:
            return response.status

    return asyncio.run(get())


@pytest.mark.slow
def test_running_out_of_descriptors_is_logged_once_not_per_retry() -> None:
    server = start_with_few_descriptors(64, "--max-connections", "1000")  # above the limit
    try:
        port = int(server.base.rsplit(":", 1)[1])
        sockets = flood(port, 100)
        server.wait_for_line("out of file descriptors or memory", timeout=10)
        for sock in sockets:
            sock.close()
        # Descriptors come back as the server sees those connections close; the fault is
        # over once accept() has worked a while after its last failure.
        deadline = time.monotonic() + 20
        while not any("over after" in line for line in server.lines):
            assert time.monotonic() < deadline, server.stderr
            assert healthz(server.base) == 200
        faults = [line for line in server.lines if "out of file descriptors" in line]
        assert len(faults) == 2, server.stderr  # it started, it is over
        assert int(faults[1].split("over after ")[1].split()[0]) > 1  # many failures, one line
    finally:
        server.stop()


@pytest.mark.slow
def test_the_default_cap_leaves_room_for_a_burst_of_connections() -> None:
    server = start_with_few_descriptors(256)
    try:
        cap = 256 - (128 + PROBE_RESERVE + 64)  # a full backlog, the reserve, the process
        assert f"at most {cap} connections" in server.stderr
        port = int(server.base.rsplit(":", 1)[1])
        sockets = flood(port, 200)
        assert healthz(server.base) == 200
        server.wait_for_line(f"connection cap of {cap} reached", timeout=10)
        # The oldest connections were closed to make room, none refused for lack of files.
        for sock in sockets[: 200 - cap]:
            sock.settimeout(10)
            assert sock.recv(1) == b""
        assert "out of file descriptors" not in server.stderr
        for sock in sockets:
            sock.close()
    finally:
        server.stop()


def test_the_limits_are_settings_of_the_command_line() -> None:
    command = [sys.executable, str(ROOT / "cmd/http"), "--help"]
    text = subprocess.run(command, capture_output=True, text=True, check=True).stdout
    for flag in (
        "--header-timeout",
        "--body-timeout",
        "--body-min-rate",
        "--idle-timeout",
        "--max-connections",
        "--max-inflight",
        "--max-session-inflight",
    ):
        assert flag in text


async def post_on(
    connection: Connection, port: int, headers: dict[str, str | bytes], target: str = "/mcp"
) -> int:
    """An initialize POSTed on a kept-alive connection; its status."""
    reader, writer = connection
    fields: dict[str, str | bytes] = {**JSON, "Connection": "keep-alive", **headers}
    writer.write(request_bytes("POST", target, fields, INIT_BODY, port))
    await writer.drain()
    return (await read_reply(reader)).status


async def test_host_and_origin_are_checked_on_every_request_of_a_kept_alive_connection() -> None:
    """A connection remembers the Host and Origin it last admitted (so a keep-alive client
    does not have them parsed per request), yet any request on it that names another host,
    another Origin or an absolute-form target is checked in full and refused as before."""
    async with served() as port:
        connection = await connect(port)
        host = f"127.0.0.1:{port}"
        steps: list[tuple[dict[str, str | bytes], str, int]] = [
            ({"Host": host}, "/mcp", 200),
            ({"Host": host}, "/mcp", 200),
            ({"Host": "evil.example"}, "/mcp", 403),
            ({"Host": host}, "/mcp", 200),
            ({"Host": host, "Origin": "http://evil.example"}, "/mcp", 403),
            ({"Host": host, "Origin": "http://localhost:3000"}, "/mcp", 200),
            ({"Host": host, "Origin": "http://localhost:3000"}, "/mcp", 200),
            ({"Host": host, "Origin": "http://evil.example"}, "/mcp", 403),
            ({"Host": host}, "http://evil.example/mcp", 403),
            ({"Host": host}, f"http://{host}/mcp", 200),
            ({"Host": host}, "http://evil.example/mcp", 403),
            ({"Host": f"{host}@evil.example"}, "/mcp", 400),
            ({"Host": "localhost"}, "/mcp", 200),
            ({"Host": host}, "/mcp", 200),
        ]
        try:
            for index, (headers, target, status) in enumerate(steps):
                got = await post_on(connection, port, headers, target)
                assert got == status, (index, headers, target)
        finally:
            connection[1].close()
    async with served(forwarded_hosts=["public.example"], allowed_hosts=["internal"]) as port:
        connection = await connect(port)
        behind: dict[str, str | bytes] = {
            "Host": "upstream:9000",
            "X-Forwarded-Host": "public.example",
        }
        try:
            assert await post_on(connection, port, behind) == 200
            assert await post_on(connection, port, behind) == 200
            other = {**behind, "X-Forwarded-Host": "elsewhere.example"}
            assert await post_on(connection, port, other) == 403
            assert await post_on(connection, port, behind) == 200
            assert await post_on(connection, port, {"Host": "upstream:9000"}) == 403
        finally:
            connection[1].close()
