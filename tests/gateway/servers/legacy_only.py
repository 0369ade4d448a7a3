"""Our examples server as a server from before 2026-07-28 would be, over stdio: it answers
`server/discover` with -32601 (Method not found), as any server that does not know the
method does, and serves everything else as the examples server does. The gateway then
speaks the legacy revision to it for every front (children/revision.py).

Hostile variants (`--discover=...`): `malformed` answers discover with a result that is no
DiscoverResult, `silent` never answers it, `exit` exits on it (a server that crashes on a
method it does not know)."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
EXAMPLES = [
    sys.executable,
    str(ROOT / "cmd/mcp"),
    "--serve",
    str(ROOT / "examples/everything_server.py"),
]

HOW = next((a.split("=", 1)[1] for a in sys.argv[1:] if a.startswith("--discover=")), "")


def main() -> int:
    child = subprocess.Popen(EXAMPLES, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    assert child.stdin is not None and child.stdout is not None
    out_lock = threading.Lock()

    def write(line: bytes) -> None:
        with out_lock:
            sys.stdout.buffer.write(line)
            sys.stdout.buffer.flush()

    def pump() -> None:
        assert child.stdout is not None
        for line in child.stdout:
            write(line)

    threading.Thread(target=pump, daemon=True).start()
    for line in sys.stdin.buffer:
        try:
            message = json.loads(line)
        except ValueError:
            message = None
        if isinstance(message, dict) and message.get("method") == "server/discover":
            if HOW == "silent":
                continue
            if HOW == "exit":
                return 3
            reply: dict[str, object] = {"jsonrpc": "2.0", "id": message.get("id")}
            if HOW == "malformed":
                reply["result"] = {"supportedVersions": "all of them", "capabilities": []}
            else:
                reply["error"] = {"code": -32601, "message": "Method not found: server/discover"}
            write(json.dumps(reply).encode() + b"\n")
            continue
        child.stdin.write(line)
        child.stdin.flush()
    child.stdin.close()
    return child.wait()


if __name__ == "__main__":
    sys.exit(main())
