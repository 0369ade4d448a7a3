"""A child that writes what the gateway must survive: raw newline-delimited JSON-RPC on
stdio, no library, so each tool can put exactly the bytes it wants on stdout.

Tools: `stray_header` (a `Content-Length: 12` debug line, then its answer), `bad_header`
(`Content-Length: abc`), `big` (a text result of `bytes` bytes), `big_id_last` (the same, the
id written last, as the TypeScript SDK does), `close_stdout` (closes stdout and keeps running
until stdin ends, then exits 0), `flood` (`count` log messages of `size` bytes, each naming
the call's progress token, then its answer), `pid` (the process id).
"""

from __future__ import annotations

import json
import os
import sys
from typing import Any

OUT = sys.stdout.buffer


def write(data: bytes) -> None:
    OUT.write(data)
    OUT.flush()


def send(message: dict[str, Any]) -> None:
    write(json.dumps(message, separators=(",", ":")).encode() + b"\n")


def text(value: str) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": value}]}


TOOLS = ["stray_header", "bad_header", "big", "big_id_last", "close_stdout", "flood", "pid"]


def call(request_id: Any, name: str, arguments: dict[str, Any], meta: dict[str, Any]) -> None:
    if name == "stray_header":
        write(b"Content-Length: 12\n")
        send({"jsonrpc": "2.0", "id": request_id, "result": text("after the stray header")})
    elif name == "bad_header":
        write(b"Content-Length: abc\n")
        send({"jsonrpc": "2.0", "id": request_id, "result": text("after the bad header")})
    elif name in ("big", "big_id_last"):
        result = json.dumps(text("x" * int(arguments["bytes"])), separators=(",", ":"))
        rid = json.dumps(request_id)
        if name == "big":
            write(b'{"jsonrpc":"2.0","id":%s,"result":%s}\n' % (rid.encode(), result.encode()))
        else:
            write(b'{"result":%s,"jsonrpc":"2.0","id":%s}\n' % (result.encode(), rid.encode()))
    elif name == "close_stdout":
        sys.stderr.write("close_stdout: closing\n")
        sys.stderr.flush()
        stdout = os.readlink("/proc/self/fd/1")
        for fd in os.listdir("/proc/self/fd"):  # uvloop's pipes leak duplicates into us
            try:
                if os.readlink(f"/proc/self/fd/{fd}") == stdout:
                    os.close(int(fd))
            except OSError:
                pass
        for _ in sys.stdin.buffer:  # until stdin ends
            pass
        sys.exit(0)
    elif name == "flood":
        data = "y" * int(arguments.get("size", 1024))
        params: dict[str, Any] = {"level": "info", "data": data}
        if "progressToken" in meta:  # ties each log line to the call (a shared child's too)
            params["_meta"] = {"progressToken": meta["progressToken"]}
        chunk = b"".join(
            json.dumps(
                {"jsonrpc": "2.0", "method": "notifications/message", "params": params},
                separators=(",", ":"),
            ).encode()
            + b"\n"
            for _ in range(100)
        )
        for _ in range(int(arguments["count"]) // 100):
            write(chunk)
        send({"jsonrpc": "2.0", "id": request_id, "result": text("flooded")})
    elif name == "pid":
        send({"jsonrpc": "2.0", "id": request_id, "result": text(str(os.getpid()))})


def main() -> None:
    for line in sys.stdin.buffer:
        message = json.loads(line)
        method, request_id = message.get("method"), message.get("id")
        if request_id is None:
            continue
        if method == "initialize":
            result: dict[str, Any] = {
                "protocolVersion": message["params"]["protocolVersion"],
                "capabilities": {"tools": {}, "logging": {}},
                "serverInfo": {"name": "framing-child", "version": "1"},
            }
            send({"jsonrpc": "2.0", "id": request_id, "result": result})
        elif method == "tools/list":
            tools = [
                {
                    "name": name,
                    "inputSchema": {"type": "object"},
                    "annotations": {"readOnlyHint": True},
                }
                for name in TOOLS
            ]
            send({"jsonrpc": "2.0", "id": request_id, "result": {"tools": tools}})
        elif method == "tools/call":
            params = message["params"]
            call(
                request_id, params["name"], params.get("arguments") or {}, params.get("_meta") or {}
            )
        elif method == "logging/setLevel" or method == "ping":
            send({"jsonrpc": "2.0", "id": request_id, "result": {}})
        else:
            error = {"code": -32601, "message": f"Method not found: {method}"}
            send({"jsonrpc": "2.0", "id": request_id, "error": error})


if __name__ == "__main__":
    main()
