"""The gateway's own tool, `gateway_status`, and its one-line startup summary
(specs/gateway.md, "Supervision")."""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

from codex_mcp.core.jsonrpc import JsonObject

from .children.child import Child
from .errors import NEEDS_LOGIN, login_command
from .relay import attribution
from .routing.sessions import SessionChildren

STATUS_TOOL = "gateway_status"


def status_tool() -> JsonObject:
    return {
        "name": STATUS_TOOL,
        "title": "Gateway status",
        "description": "The MCP servers behind this gateway: for each, its state, tool count, "
        "restarts, last error and uptime.",
        "inputSchema": {"type": "object", "properties": {}},
        "annotations": {
            "readOnlyHint": True,
            "destructiveHint": False,
            "idempotentHint": True,
            "openWorldHint": False,
        },
    }


def child_status(child: Child) -> dict[str, Any]:
    return {
        "name": child.name,
        "transport": child.server.transport,
        "per_session": child.server.per_session,
        "state": child.cannot_run or child.state,
        "tools": len(child.current_tools),
        "restarts": child.restarts,
        "last_error": child.last_error,
        "uptime_sec": round(time.monotonic() - child.up_since, 1) if child.up_since else None,
        "pid": child.connection.pid if child.connection is not None else None,
        "unrouted_messages": child.unrouted,
        "unrouted_in_calls": child.unrouted_in_calls,
        "sessions": attribution.sessions_served(child),
        "withheld": [
            {"kind": kind, "name": name, "why": why}
            for (kind, name), why in sorted(child.withheld.items())
        ],
    }


def status_result(children: Sequence[Child], per_session: SessionChildren) -> JsonObject:
    servers: list[dict[str, Any]] = [child_status(child) for child in children]
    present = {child.name for child in children}
    for server in per_session.servers:
        if server.name not in present:
            servers.append(
                {
                    "name": server.name,
                    "transport": server.transport,
                    "per_session": True,
                    "state": "not started",
                    "tools": 0,
                    "restarts": 0,
                    "last_error": None,
                    "uptime_sec": None,
                    "pid": None,
                    "unrouted_messages": 0,
                    "unrouted_in_calls": 0,
                    "sessions": "none",
                    "withheld": [],
                }
            )
    for entry in servers:
        advice = attribution.advice(entry["unrouted_messages"], entry["unrouted_in_calls"])
        if advice is not None and not entry["per_session"]:
            entry["advice"] = advice
    lines = [
        f"{s['name']}: {s['state']}, {s['tools']} tool(s), {s['restarts']} restart(s)"
        + (f", up {s['uptime_sec']:g} s" if s["uptime_sec"] is not None else "")
        + (f"; last error: {s['last_error']}" if s["last_error"] else "")
        + (f"; {s['advice']}" if s.get("advice") else "")
        + "".join(f"; withheld: {w['why']}: run `codex-mcp trust`" for w in s["withheld"])
        for s in servers
    ]
    structured: JsonObject = {"servers": servers}
    if per_session.servers:
        structured["per_session_children"] = len(per_session.live)
        structured["max_session_children"] = per_session.limit
        structured["max_session_children_per_principal"] = per_session.share
    return {
        "content": [{"type": "text", "text": "\n".join(lines) or "no servers"}],
        "structuredContent": structured,
    }


def _why_down(child: Child) -> str:
    login = login_command(child.last_error_data) if child.state == NEEDS_LOGIN else None
    if login is not None:
        return f"{NEEDS_LOGIN}: run `{login}`"
    return child.last_error or child.state


def summary_line(
    children: Sequence[Child], per_session_names: Sequence[str], lazy: Sequence[str] = ()
) -> str:
    """`Started 3 child server(s): a, b, c` (the TypeScript wrapper's line), and what did not
    start."""
    up = [child.name for child in children if child.connection is not None]
    down = [child for child in children if child.connection is None]
    line = f"Started {len(up)} child server(s): {', '.join(up) or '-'}"
    if down:
        line += f"; {len(down)} not started: " + ", ".join(
            f"{child.name} ({_why_down(child)})" for child in down
        )
    if per_session_names:
        line += "; started per session: " + ", ".join(per_session_names)
    if lazy:
        line += "; started at first call: " + ", ".join(lazy)
    return line
