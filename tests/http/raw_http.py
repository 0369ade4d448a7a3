"""HTTP/1.1 over a plain socket, for requests no client library would send: odd bytes in
headers, a Host with junk after it, headers or bodies that arrive slowly or never."""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass
from typing import Any

from http_helpers import init

INIT_BODY = json.dumps(init()).encode()


@dataclass
class Reply:
    status: int
    headers: dict[str, str]
    body: bytes

    def json(self) -> Any:
        return json.loads(self.body)


def request_bytes(
    method: str,
    target: str | bytes,
    headers: dict[str, str | bytes] | None = None,
    body: bytes = b"",
    port: int = 0,
) -> bytes:
    """A complete request; Host (127.0.0.1:port) unless given, Content-Length for a body,
    and Connection: close, so the reply ends with the connection."""
    fields: dict[str, str | bytes] = {"Host": f"127.0.0.1:{port}", "Connection": "close"}
    fields.update(headers or {})
    if body or method == "POST":
        fields["Content-Length"] = str(len(body))
    target = target.encode() if isinstance(target, str) else target
    lines = [method.encode() + b" " + target + b" HTTP/1.1"]
    lines += [
        name.encode() + b": " + (v if isinstance(v, bytes) else v.encode())
        for name, v in fields.items()
    ]
    return b"\r\n".join(lines) + b"\r\n\r\n" + body


async def read_reply(reader: asyncio.StreamReader, timeout: float = 10) -> Reply:
    """The status, headers and body of one response (a stream's body is what came first)."""
    head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), timeout)
    status_line, *header_lines = head.decode("latin-1").split("\r\n")
    headers = {}
    for line in header_lines:
        if line:
            name, _, value = line.partition(":")
            headers[name.strip().lower()] = value.strip()
    if "content-length" in headers:
        body = await asyncio.wait_for(reader.readexactly(int(headers["content-length"])), timeout)
    elif headers.get("content-type", "").startswith("text/event-stream"):
        body = b""  # a stream: its status is the answer
    else:
        body = await asyncio.wait_for(reader.read(), timeout)
    return Reply(int(status_line.split(" ")[1]), headers, body)


async def send(port: int, data: bytes, timeout: float = 10) -> Reply:
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    try:
        writer.write(data)
        await writer.drain()
        return await read_reply(reader, timeout)
    finally:
        writer.close()


async def initialize(port: int) -> str:
    """A new session's id."""
    reply = await send(
        port,
        request_bytes(
            "POST",
            "/mcp",
            {"Content-Type": "application/json", "Accept": "application/json"},
            INIT_BODY,
            port,
        ),
    )
    assert reply.status == 200, reply
    return reply.headers["mcp-session-id"]


async def closed_by_server(reader: asyncio.StreamReader, timeout: float) -> bytes:
    """Everything the server sends until it closes the connection (fails on timeout)."""
    return await asyncio.wait_for(reader.read(), timeout)
