"""Raw JSON-RPC over Streamable HTTP for the policy tests (both eras), the policy files and
the real processes: `codex-mcp-http` serving the child directly, or a gateway of it."""

from __future__ import annotations

import hashlib
import json
import os
import sys
from pathlib import Path
from typing import Any

import aiohttp
from support.processes import HttpProcess
from support.raw_session import open_session

ROOT = Path(__file__).resolve().parents[2]
CHILD = Path(__file__).parent / "servers" / "child.py"
CMD_MCP = str(ROOT / "cmd/mcp")
ACCEPT = "application/json, text/event-stream"
META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {
        "extensions": {"io.modelcontextprotocol/tasks": {}}
    },
    "io.modelcontextprotocol/clientInfo": {"name": "policy-tests", "version": "1"},
}
#: The child's tools, resources and prompts, by its own names.
TOOLS = ("get_time", "rm", "admin_reset", "echo", "job", "report")
RESOURCES = ("mem://open", "mem://secret")
PROMPTS = ("greet", "secret_prompt")


def principal_of(token: str) -> str:
    """How the policy (and the audit log) names a static bearer token's caller."""
    return "sha256:" + hashlib.sha256(token.encode()).hexdigest()[:16]


def write_policy(directory: Path, document: Any, name: str = "policy.json") -> Path:
    path = directory / name
    path.write_text(document if isinstance(document, str) else json.dumps(document))
    return path


def plain_server(policy: Path, *args: str, lines: list[str] | None = None) -> HttpProcess:
    return HttpProcess("--serve", str(CHILD), "--policy", str(policy), *args, lines=lines)


def gateway_server(
    directory: Path,
    policy: Path,
    entries: dict[str, dict[str, Any]],
    *args: str,
    lines: list[str] | None = None,
    child: Path = CHILD,
) -> HttpProcess:
    """A `codex-mcp-http` gateway whose children are the `child` server, one per entry
    (each entry's own settings merged in)."""
    servers = {
        name: {"command": sys.executable, "args": [CMD_MCP, "--serve", str(child)], **extra}
        for name, extra in entries.items()
    }
    config = directory / ".mcp.json"
    config.write_text(json.dumps({"mcpServers": servers}))
    env = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith(("WRAPPER_", "MCP_WRAPPER_", "CODEX_MCP_")) and key != "DEBUG"
    }
    env["CODEX_MCP_WRAPPER_CONFIG"] = str(config)
    env["WRAPPER_STARTUP_BUDGET_MS"] = "30000"  # list only once every child is up
    return HttpProcess("--policy", str(policy), *args, env=env, lines=lines)


async def answer(response: aiohttp.ClientResponse) -> dict[str, Any]:
    """The JSON-RPC response in a JSON body or an SSE stream."""
    if response.content_type == "text/event-stream":
        async for raw in response.content:
            line = raw.decode().strip()
            if line.startswith("data:"):
                message = json.loads(line[5:])
                if "id" in message and ("result" in message or "error" in message):
                    return dict(message)
        raise AssertionError("the stream ended without a response")
    return dict(await response.json(content_type=None))


class Caller:
    """One legacy session (initialize first) of one credential, over raw HTTP."""

    def __init__(self, http: aiohttp.ClientSession, url: str, token: str | None = None) -> None:
        self.http, self.url = http, url
        self.auth = {"Authorization": f"Bearer {token}"} if token else {}
        self.headers: dict[str, str] = {}
        self.ids = 1

    async def open(self) -> Caller:
        self.headers = await open_session(self.http, self.url, extra=self.auth)
        return self

    async def ask(self, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        self.ids += 1
        message = {"jsonrpc": "2.0", "id": self.ids, "method": method, "params": params or {}}
        async with self.http.post(self.url, json=message, headers=self.headers) as response:
            if response.status != 200:
                return {"http_status": response.status, "body": await response.text()}
            return await answer(response)

    async def stateless(self, method: str, params: dict[str, Any], name: str | None = None) -> Any:
        """A 2026-07-28 request: no session, version and capabilities in its `_meta`."""
        self.ids += 1
        headers = {
            "Accept": ACCEPT,
            "MCP-Protocol-Version": "2026-07-28",
            "Mcp-Method": method,
            **self.auth,
        }
        if name is not None:
            headers["Mcp-Name"] = name
        body = {
            "jsonrpc": "2.0",
            "id": self.ids,
            "method": method,
            "params": {**params, "_meta": META},
        }
        async with self.http.post(self.url, json=body, headers=headers) as response:
            if response.status != 200:
                return {"http_status": response.status, "body": await response.text()}
            return await answer(response)

    async def listed(self, kind: str) -> list[str]:
        method, key, field = {
            "tools": ("tools/list", "tools", "name"),
            "resources": ("resources/list", "resources", "uri"),
            "prompts": ("prompts/list", "prompts", "name"),
        }[kind]
        reply = await self.ask(method)
        assert "result" in reply, reply
        return [item[field] for item in reply["result"][key]]


def called(reply: dict[str, Any], tool: str) -> bool:
    """Did the call reach the tool (its answer names it)?"""
    result = reply.get("result")
    if not isinstance(result, dict) or result.get("isError"):
        return False
    return any(f"called {tool}" in block.get("text", "") for block in result.get("content", []))


def refused(reply: dict[str, Any]) -> bool:
    """A refusal: a JSON-RPC error, or an HTTP refusal, never a result."""
    return "error" in reply or "http_status" in reply


def universe(children: tuple[str, ...] = ()) -> dict[str, list[str]]:
    """Every tool, resource and prompt the server could serve: the child's own names, or
    behind a gateway each child's, as the gateway names them."""
    if not children:
        return {"tools": list(TOOLS), "resources": list(RESOURCES), "prompts": list(PROMPTS)}
    return {
        "tools": [f"{c}__{t}" for c in children for t in TOOLS],
        "resources": [uri.replace("mem://", f"mem://{c}/") for c in children for uri in RESOURCES],
        "prompts": [f"{c}__{p}" for c in children for p in PROMPTS],
    }


async def usable(caller: Caller, kind: str, name: str) -> bool:
    """Does using it (a call, a read, a get) give an answer rather than a refusal?"""
    if kind == "tools":
        reply = await caller.ask("tools/call", {"name": name, "arguments": {}})
        result = reply.get("result")
        return isinstance(result, dict) and not result.get("isError")
    if kind == "resources":
        return "result" in await caller.ask("resources/read", {"uri": name})
    return "result" in await caller.ask("prompts/get", {"name": name})


async def listed_and_usable(
    caller: Caller, everything: dict[str, list[str]]
) -> dict[str, tuple[set[str], set[str]]]:
    """Per kind: (what the listing shows, what can be used), over everything that could be
    served plus whatever the listing shows (the gateway's own status tool)."""
    found = {}
    for kind, names in everything.items():
        listed = set(await caller.listed(kind))
        used = {name for name in sorted(listed | set(names)) if await usable(caller, kind, name)}
        found[kind] = (listed, used)
    return found
