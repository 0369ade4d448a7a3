"""One of two processes sharing a token store (tests/client/test_hostile_token_store.py).

    python oauth_store_worker.py STORE_DIR URL

Reads commands on stdin, one per line: `load` builds a fresh OAuth and reads the store (as
a process starting up does) and prints `loaded`; `go` connects, calls `whoami` and prints
one JSON line: {"ok": true, "text": ...} or {"ok": false, "error": ...}. The test tells
both processes `go` only once both have loaded, so both start from the same tokens.
"""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path

from codex_mcp.client import Client
from codex_mcp.client.errors import McpClientError
from codex_mcp.client.oauth import OAuth, TokenStore


async def main(store_dir: str, url: str) -> None:
    loop = asyncio.get_running_loop()
    auth: OAuth | None = None
    while line := (await loop.run_in_executor(None, sys.stdin.readline)).strip():
        if line == "load":
            auth = OAuth(store=TokenStore(Path(store_dir)))
            auth.bind(url)
            assert auth.state.tokens is not None
            print("loaded", flush=True)
        elif line == "go" and auth is not None:
            try:
                async with Client.http(url, auth=auth, timeout=30) as client:
                    result = await client.call_tool("whoami", {})
                print(json.dumps({"ok": True, "text": result.text}), flush=True)
            except McpClientError as exc:
                print(json.dumps({"ok": False, "error": str(exc)}), flush=True)


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], sys.argv[2]))
