"""A minimal stdio MCP server that frames messages with Content-Length headers (LSP-style),
as some older servers do. It only answers what the client tests need."""

from __future__ import annotations

import json
import sys


def read_message() -> dict | None:
    length = None
    while True:
        line = sys.stdin.buffer.readline()
        if not line:
            return None
        if not line.strip():
            if length is not None:
                break
            continue
        name, _, value = line.decode().partition(":")
        if name.strip().lower() == "content-length":
            length = int(value.strip())
    return json.loads(sys.stdin.buffer.read(length))


def write_message(message: dict) -> None:
    body = json.dumps(message).encode()
    sys.stdout.buffer.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
    sys.stdout.buffer.flush()


def main() -> None:
    while (message := read_message()) is not None:
        method, request_id = message.get("method"), message.get("id")
        if request_id is None:
            continue
        if method == "initialize":
            result = {
                "protocolVersion": message["params"]["protocolVersion"],
                "capabilities": {"tools": {}},
                "serverInfo": {"name": "content-length", "version": "1"},
            }
        elif method == "tools/list":
            result = {"tools": [{"name": "shout", "inputSchema": {"type": "object"}}]}
        elif method == "tools/call":
            text = str(message["params"]["arguments"].get("text", "")).upper()
            result = {"content": [{"type": "text", "text": text}]}
        else:
            write_message(
                {"jsonrpc": "2.0", "id": request_id, "error": {"code": -32601, "message": "no"}}
            )
            continue
        write_message({"jsonrpc": "2.0", "id": request_id, "result": result})


if __name__ == "__main__":
    main()
