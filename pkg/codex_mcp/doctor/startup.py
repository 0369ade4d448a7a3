"""Start one server the way Codex does and list its tools, timing each step.

Codex greets a server with `initialize`, or, opted in to 2026-07-28, with `server/discover`
first and `initialize` when the server does not know it; it gives that, and then the first
`tools/list`, each the entry's startup timeout
(codex-rs/codex-mcp/src/rmcp_client.rs, `start_server_task`; 30 s unless set). Doctor waits
longer (`wait`) to tell a server that is slow (and by how much: the fix is a number) from one
that never answers. A stdio child gets only the environment Codex gives it (codex_launch);
an HTTP server is reached with the entry's headers and bearer token, and no stored login:
Codex keeps its own (`codex mcp login`), which doctor cannot read.
"""

from __future__ import annotations

import asyncio
import os
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from codex_mcp.client import Client
from codex_mcp.client.errors import ConnectionClosed
from codex_mcp.client.oauth import OAuth
from codex_mcp.client.oauth.errors import BearerTokenNeeded, NeedsLogin
from codex_mcp.client.oauth.store import MemoryStore
from codex_mcp.client.transports.stdio import StdioTransport
from codex_mcp.codex_compat.client import codex_client_options
from codex_mcp.gateway.errors import normalize_exception, one_line
from codex_mcp.lint.cli import raw_tools

from .codex_config import CodexServer, HttpEntry, StdioEntry
from .codex_launch import find_command, not_found, server_environment

#: Our gateway's own tool: the state of each child, asked after the listing of a gateway.
GATEWAY_STATUS = "gateway_status"

Outcome = Literal[
    "listed", "not startable", "exited", "too slow", "no answer", "needs login", "failed"
]


@dataclass
class Started:
    """What starting one server showed."""

    outcome: Outcome
    tools: list[Any] = field(default_factory=list)
    #: Seconds to the initialize answer, and from it to the end of the first listing.
    initialize_seconds: float | None = None
    list_seconds: float | None = None
    #: One line: why it is not `listed`.
    error: str | None = None
    #: One line: what to do about it.
    fix: str | None = None
    #: How it was started (the resolved command, or the URL).
    target: str = ""
    #: The skills it serves (SEP-2640), path (`team/code-review`) -> description, when it
    #: declares them; asked after Codex's steps, untimed (Codex itself does not list skills).
    skills: dict[str, str] = field(default_factory=dict)
    #: For our gateway: what `gateway_status` says of each child (name, state, last_error).
    children: list[dict[str, Any]] = field(default_factory=list)

    @property
    def seconds(self) -> float | None:
        if self.initialize_seconds is None:
            return None
        return self.initialize_seconds + (self.list_seconds or 0.0)


async def start_like_codex(
    server: CodexServer,
    environ: Mapping[str, str],
    path: str,
    wait: float,
    *,
    gateway: bool = False,
) -> Started:
    """`environ`: Codex's own environment (its PATH replaced by `path`); `gateway`: the
    entry is our gateway, whose children's states are asked too."""
    if isinstance(server.transport, HttpEntry):
        return await _start_http(server, server.transport, environ, wait)
    entry = server.transport
    if server.refused is not None:
        fix = 'set it to "2026-07-28" in the entry\'s env, or remove it'
        return Started("not startable", error=server.refused, fix=fix, target=entry.command)
    prepared = stdio_transport(entry, environ, path)
    if isinstance(prepared, Started):
        return prepared
    client = Client(prepared, **_codex_client(server, wait))
    target = prepared.command[0]
    return await _list(client, server, wait, target=target, command=entry.command, gateway=gateway)


def stdio_transport(
    entry: StdioEntry, environ: Mapping[str, str], path: str
) -> StdioTransport | Started:
    """The child as Codex starts it, or why it cannot be started."""
    env = server_environment(environ, path, entry.env_vars, entry.env)
    cwd = os.path.expanduser(entry.cwd) if entry.cwd else None
    found = find_command(entry.command, env.get("PATH"), cwd)
    if found is None:
        missing = not_found(entry.command, env.get("PATH", ""), entry.cwd)
        return Started(
            "not startable", error=missing.problem, fix=missing.fix, target=entry.command
        )
    return StdioTransport([found, *entry.args], env=env, inherit_env=False, cwd=cwd)


def _codex_client(server: CodexServer, wait: float) -> dict[str, Any]:
    """What Codex says and which revision it tries first ("auto": server/discover, then
    `initialize` when the server does not know it, on the same connection)."""
    mode = "auto" if server.discovers_first else "legacy"
    return {**codex_client_options(), "timeout": wait, "mode": mode}


async def _start_http(
    server: CodexServer, entry: HttpEntry, environ: Mapping[str, str], wait: float
) -> Started:
    headers = dict(entry.http_headers)
    for name, variable in entry.env_http_headers.items():
        if environ.get(variable, "").strip():
            headers[name] = environ[variable]
    if entry.bearer_token_env_var is not None:
        token = environ.get(entry.bearer_token_env_var)
        if not token:
            said = "is empty" if token == "" else "is not set"
            error = f"environment variable {entry.bearer_token_env_var} {said}"
            fix = f"set {entry.bearer_token_env_var} in the environment Codex starts in"
            return Started("not startable", error=error, fix=fix, target=entry.url)
        headers["Authorization"] = f"Bearer {token}"
    auth = None if "Authorization" in headers else OAuth(store=MemoryStore(), fallback=False)
    client = Client.http(entry.url, headers=headers, auth=auth, **_codex_client(server, wait))
    return await _list(client, server, wait, target=entry.url, command=None)


async def _list(
    client: Client,
    server: CodexServer,
    wait: float,
    *,
    target: str,
    command: str | None,
    gateway: bool = False,
) -> Started:
    began = time.monotonic()
    initialized: float | None = None
    try:
        async with asyncio.timeout(wait):
            async with client:
                initialized = time.monotonic()
                tools = await raw_tools(client, wait)
                listed_at = time.monotonic()
                skills = await client.skill_descriptions()
                children = await _children(client, tools) if gateway else []
        started = Started("listed", tools, initialized - began, listed_at - initialized)
        started.target, started.skills, started.children = target, skills, children
        return started
    except TimeoutError:
        step = "initialize" if initialized is None else "tools/list"
        waited = f"no {step} answer within {wait:g} s"
        fix = "check that it starts by hand; if it is only slow, raise startup_timeout_sec"
        started = Started("no answer", error=waited, fix=fix, target=target)
        if initialized is not None:
            started.initialize_seconds = initialized - began
        return started
    except NeedsLogin:
        fix = (
            f"run `codex mcp login {server.name}` (Codex keeps its own login; doctor cannot see it)"
        )
        return Started(
            "needs login", error="the server wants an OAuth login", fix=fix, target=target
        )
    except BearerTokenNeeded as error:
        fix = "set bearer_token_env_var to a variable that holds the token"
        return Started("needs login", error=one_line(error), fix=fix, target=target)
    except Exception as error:  # whatever the server did, one line about it
        return _failed(error, server, target, command)


async def _children(client: Client, tools: list[Any]) -> list[dict[str, Any]]:
    """Each child's status as our gateway reports it (none when it has no status tool)."""
    if not any(isinstance(t, dict) and t.get("name") == GATEWAY_STATUS for t in tools):
        return []
    try:
        result = await client.request("tools/call", {"name": GATEWAY_STATUS, "arguments": {}})
    except Exception:  # a gateway that cannot say: its listing is what there is to judge
        return []
    structured = result.get("structuredContent")
    servers = structured.get("servers") if isinstance(structured, dict) else None
    return [s for s in servers if isinstance(s, dict)] if isinstance(servers, list) else []


def _failed(error: Exception, server: CodexServer, target: str, command: str | None) -> Started:
    if isinstance(error, ConnectionClosed):  # its own words: the exit code, its stderr's end
        fix = "run the command by hand to see why it stops"
        return Started("exited", error=one_line(error), fix=fix, target=target)
    message = normalize_exception(error, server=server.name, command=command)["message"]
    fix = "run the command by hand to see why"
    return Started("failed", error=one_line(message), fix=fix, target=target)
