"""An MCP server whose tools and skills are whatever a script file says, read again at every
request: raw newline-delimited JSON-RPC on stdio, no library, so it can serve what no
well-behaved server would (a rug pull, a skill named `..`, files outside their skill,
sizes that lie). With SCRIPTED_SERVER_WATCH=1 it sends `tools/list_changed` when the file
changes while it runs (else a change is seen at its next start, or next listing).

The file (SCRIPTED_SERVER_FILE):

    {"tools": [<tool definitions, as listed>],
     "skills": [{"uri": "skill://x/SKILL.md", "frontmatter": {...},
                 "files": {"<uri>": "<text>" | {"blob": "<base64>"}},
                 "resources": <optional: the entry's resources as sent, else from files>}]}

`add` answers a + b; any other tool answers `called NAME`.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import sys
import threading
import time
import uuid
from pathlib import Path
from typing import Any

SCRIPT = os.environ.get("SCRIPTED_SERVER_FILE", "")
RUNS = os.environ.get("SCRIPTED_SERVER_RUNS")
LIST_DELAY = float(os.environ.get("SCRIPTED_SERVER_LIST_DELAY", "0"))
_write = threading.Lock()
_initialized = threading.Event()


def _send(message: dict[str, Any]) -> None:
    with _write:
        sys.stdout.write(json.dumps(message) + "\n")
        sys.stdout.flush()


def _script(script: str = "") -> dict[str, Any]:
    with open(script or SCRIPT, encoding="utf-8") as file:
        loaded: dict[str, Any] = json.load(file)
        return loaded


def _bytes(content: Any) -> bytes:
    if isinstance(content, dict):
        return base64.b64decode(content["blob"])
    return str(content).encode("utf-8")


def _entry(skill: dict[str, Any]) -> dict[str, Any]:
    resources = skill.get("resources")
    if resources is None:
        resources = [
            {
                "uri": uri,
                "digest": "sha256:" + hashlib.sha256(_bytes(content)).hexdigest(),
                "size": len(_bytes(content)),
            }
            for uri, content in skill.get("files", {}).items()
        ]
    return {"uri": skill["uri"], "frontmatter": skill["frontmatter"], "resources": resources}


def _read(uri: str, script: str) -> dict[str, Any] | None:
    for skill in _script(script).get("skills", []):
        content = skill.get("files", {}).get(uri)
        if isinstance(content, dict):
            return {"uri": uri, "blob": content["blob"]}
        if content is not None:
            return {"uri": uri, "text": content, "mimeType": "text/markdown"}
    return None


def _ran(runs: str | None, name: Any, arguments: Any) -> None:
    if runs:
        with open(runs, "a", encoding="utf-8") as file:
            file.write(
                json.dumps({"name": name, "arguments": arguments, "pid": os.getpid()}) + "\n"
            )


def _answer(
    method: str, params: dict[str, Any], script: str = "", runs: str | None = RUNS
) -> dict[str, Any]:
    if method == "initialize":
        return {
            "protocolVersion": params.get("protocolVersion", "2025-11-25"),
            "capabilities": {
                "tools": {"listChanged": True},
                "resources": {},
                "extensions": {"io.modelcontextprotocol/skills": {}},
            },
            "serverInfo": {"name": "scripted", "version": "1"},
        }
    if method == "ping":
        return {}
    if method == "tools/list":
        time.sleep(LIST_DELAY)
        return {"tools": _script(script).get("tools", [])}
    if method == "tools/call":
        name, arguments = params.get("name"), params.get("arguments") or {}
        _ran(runs, name, arguments)
        if name == "add":
            text = str(arguments.get("a", 0) + arguments.get("b", 0))
        else:
            text = f"called {name}"
        return {"content": [{"type": "text", "text": text}]}
    if method == "skills/list":
        return {"skills": [_entry(skill) for skill in _script(script).get("skills", [])]}
    if method == "skills/get":
        for skill in _script(script).get("skills", []):
            if skill["uri"] == params.get("uri"):
                return {"skill": _entry(skill)}
        raise LookupError(params.get("uri"))
    if method == "resources/list":
        return {"resources": []}
    if method == "resources/templates/list":
        return {"resourceTemplates": []}
    if method == "resources/read":
        found = _read(params.get("uri", ""), script)
        if found is None:
            raise LookupError(params.get("uri"))
        return {"contents": [found]}
    raise NotImplementedError(method)


def _watch() -> None:
    """`tools/list_changed` whenever the script file changes (after the handshake)."""
    last = os.stat(SCRIPT).st_mtime_ns
    while True:
        time.sleep(0.05)
        try:
            now = os.stat(SCRIPT).st_mtime_ns
        except OSError:
            continue
        if now != last and _initialized.is_set():
            last = now
            _send({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"})


def _reply(message: dict[str, Any], script: str = "", runs: str | None = RUNS) -> dict[str, Any]:
    """The answer to one request."""
    method, ident = message.get("method"), message.get("id")
    try:
        result = _answer(str(method), message.get("params") or {}, script, runs)
        return {"jsonrpc": "2.0", "id": ident, "result": result}
    except NotImplementedError:
        error = {"code": -32601, "message": f"Method not found: {method}"}
    except LookupError as missing:
        uri = str(missing.args[0])
        error = {"code": -32602, "message": f"Resource not found: {uri}", "data": {"uri": uri}}
    return {"jsonrpc": "2.0", "id": ident, "error": error}


def serve_http(port: int, folder: Path) -> None:
    """Streamable HTTP on 127.0.0.1:`port`, a script per path (see the module's doc)."""
    from aiohttp import web

    sessions: set[str] = set()

    async def post(request: web.Request) -> web.StreamResponse:
        name = request.match_info["name"]
        message = await request.json()
        headers: dict[str, str] = {}
        if message.get("method") == "initialize":
            session = headers["Mcp-Session-Id"] = uuid.uuid4().hex
            sessions.add(session)
        elif request.headers.get("Mcp-Session-Id") not in sessions:
            return web.Response(status=404, text="unknown session")
        if "id" not in message or "method" not in message:
            return web.Response(status=202)
        script, runs = str(folder / f"{name}.json"), str(folder / f"{name}.runs")
        return web.json_response(_reply(message, script, runs), headers=headers)

    async def delete(request: web.Request) -> web.StreamResponse:
        sessions.discard(request.headers.get("Mcp-Session-Id", ""))
        return web.Response(status=200)

    async def get(_request: web.Request) -> web.StreamResponse:
        return web.Response(status=405)

    app = web.Application()
    app.router.add_post("/{name}", post)
    app.router.add_delete("/{name}", delete)
    app.router.add_get("/{name}", get)
    web.run_app(app, host="127.0.0.1", port=port, print=None, handle_signals=True)


def main() -> None:
    if sys.argv[1:2] == ["--http"]:
        serve_http(int(sys.argv[2]), Path(sys.argv[3]))
        return
    if os.environ.get("SCRIPTED_SERVER_WATCH") == "1":
        threading.Thread(target=_watch, daemon=True).start()
    for line in sys.stdin:
        try:
            message = json.loads(line)
        except ValueError:
            continue
        method, ident = message.get("method"), message.get("id")
        if method == "notifications/initialized":
            _initialized.set()
        if ident is None or method is None:
            continue
        _send(_reply(message))


if __name__ == "__main__":
    main()
