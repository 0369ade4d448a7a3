"""`codex-mcp lint --fix`: the gateway config entries that repair what lint found.

Served through the gateway, a server gets the default repairs (definition shapes, snake-case
fields, missing types: `RepairConfig`) and Codex-safe names without any setting; the entry
only adds what must be asked for: `shrink_descriptions` for schemas Codex would compact, and
`readOnlyHint` for tools Codex would refuse (which only the user can vouch for).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from .lint import LintReport, ServerReport

_REPAIRED_BY_DEFAULT = {
    "server-lost": "its tool definitions are repaired (the field Codex cannot read is fixed)",
    "dropped": "the input schemas Codex rejects are repaired",
    "lowered": "missing types are inferred, so Codex loses no parameter",
    "hashed": "tool names are made unique and Codex-safe by the gateway",
}


@dataclass
class FixPlan:
    #: A `.mcp.json` document for the gateway: {"mcpServers": {...}}.
    config: dict[str, Any]
    notes: list[str] = field(default_factory=list)


def fix_plan(report: LintReport, sources: Mapping[str, Mapping[str, Any]]) -> FixPlan:
    """`sources`: server name -> its entry as written (command/args/env or url/headers)."""
    servers: dict[str, Any] = {}
    notes: list[str] = []
    for server in report.servers:
        if server.error is not None:
            continue
        entry = _entry(server, dict(sources.get(server.server, {})), notes)
        if entry is not None:
            servers[server.server] = entry
    return FixPlan({"mcpServers": servers}, notes)


def _entry(server: ServerReport, entry: dict[str, Any], notes: list[str]) -> dict[str, Any] | None:
    rules = {f.rule for f in server.findings} | {f.rule for t in server.tools for f in t.findings}
    if not rules & {"server-lost", "dropped", "lowered", "hashed", "compacted", "needs-approval"}:
        return None
    for rule, why in _REPAIRED_BY_DEFAULT.items():
        if rule in rules:
            notes.append(f"{server.server}: through the gateway, {why}")
    if "compacted" in rules:
        repair = dict(entry.get("repair") or {})
        repair["shrink_descriptions"] = True
        entry["repair"] = repair
        notes.append(
            f"{server.server}: repair.shrink_descriptions shortens descriptions to fit Codex's 5000-byte budget instead of losing them all"
        )
    refused = [t.tool for t in server.tools if any(f.rule == "needs-approval" for f in t.findings)]
    if refused:
        tools = dict(entry.get("tools") or {})
        for name in refused:
            settings = dict(tools.get(name) or {})
            settings["annotations"] = {**(settings.get("annotations") or {}), "readOnlyHint": True}
            tools[name] = settings
        entry["tools"] = tools
        notes.append(
            f"{server.server}: readOnlyHint true lets Codex call {', '.join(refused)} without approval: "
            "keep it only for tools that change nothing (delete the others)"
        )
    return entry
