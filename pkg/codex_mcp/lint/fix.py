"""`codex-mcp lint --fix`: the gateway config entries that repair what lint found; never a
`readOnlyHint: true` for a tool that may change something (specs/gateway.md, "`codex-mcp lint`")."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from codex_mcp.codex_compat.check import LintReport, ServerReport, ToolReport

#: The findings the gateway's config can do something about.
_FIXED = frozenset({"server-lost", "dropped", "lowered", "hashed", "compacted", "needs-approval"})
_REPAIRED_BY_DEFAULT = {
    "server-lost": "its tool definitions are repaired (the field Codex cannot read is fixed)",
    "dropped": "the input schemas Codex rejects are repaired",
    "lowered": "missing types are inferred, so Codex loses no parameter",
    "hashed": "tool names are made unique and Codex-safe by the gateway",
}


#: Words (of a tool's name or description) that say it changes something, by what it does.
_CHANGES = {
    "writes": "write writes writing written overwrite overwrites edit edits editing modify "
    "modifies update updates patch append appends insert inserts replace replaces save saves "
    "upload uploads truncate",
    "deletes": "delete deletes deleting remove removes removing erase erases unlink rm rmdir "
    "drop drops purge kill",
    "moves": "move moves moving rename renames renaming mv",
    "creates": "create creates creating mkdir touch install installs",
    "sends": "send sends sending email emails publish publishes notify post posts",
    "executes": "execute executes executing exec run runs running eval evaluate shell spawn "
    "command commands script",
}
_CHANGE_WORDS = {word: verb for verb, words in _CHANGES.items() for word in words.split()}


@dataclass(frozen=True, slots=True)
class NeedsApproval:
    """A tool Codex will ask about, for which lint proposes no readOnlyHint: and why."""

    server: str
    tool: str
    why: str


@dataclass
class FixPlan:
    #: A `.mcp.json` document for the gateway: {"mcpServers": {...}}.
    config: dict[str, Any]
    notes: list[str] = field(default_factory=list)
    needs_approval: list[NeedsApproval] = field(default_factory=list)


def changes_something(tool: ToolReport) -> str | None:
    """Why `tool` may change something (so it is no candidate for readOnlyHint), or None."""
    annotations = tool.definition.get("annotations")
    if isinstance(annotations, dict):
        if annotations.get("readOnlyHint") is False:
            return "its server says it is not read-only"
        if annotations.get("destructiveHint") is True:
            return "its server says it is destructive"
    name_words = re.split(r"[^A-Za-z0-9]+|(?<=[a-z0-9])(?=[A-Z])", tool.tool)
    for word in name_words:
        verb = _CHANGE_WORDS.get(word.lower())
        if verb is not None:
            return f"its name says it {verb} ({word!r})"
    description = tool.definition.get("description")
    if isinstance(description, str):
        for word in re.findall(r"[a-z]+", description.lower()):
            verb = _CHANGE_WORDS.get(word)
            if verb is not None:
                return f"its description says it {verb} ({word!r})"
    return None


def fix_plan(report: LintReport, sources: Mapping[str, Mapping[str, Any]]) -> FixPlan:
    """`sources`: server name -> its entry as written (command/args/env or url/headers).
    A note that holds for several servers is one line naming them all."""
    plan = FixPlan({"mcpServers": {}})
    servers_of: dict[str, list[str]] = {}  # a note -> the servers it is about, in order
    for server in report.servers:
        if server.error is not None:
            continue
        notes: list[str] = []
        entry = _entry(server, dict(sources.get(server.server, {})), plan, notes)
        if entry is not None:
            plan.config["mcpServers"][server.server] = entry
            for note in notes:
                servers_of.setdefault(note, []).append(server.server)
    plan.notes = [f"{', '.join(names)}: {note}" for note, names in servers_of.items()]
    return plan


def _entry(
    server: ServerReport, entry: dict[str, Any], plan: FixPlan, notes: list[str]
) -> dict[str, Any] | None:
    """`server`'s entry with what the gateway should do for it, or None when the gateway has
    nothing to do for it (its notes go to `notes`, without the server's name)."""
    rules = {f.rule for f in server.findings} | {f.rule for t in server.tools for f in t.findings}
    if not rules & _FIXED:
        return None
    for rule, why in _REPAIRED_BY_DEFAULT.items():
        if rule in rules:
            notes.append(f"through the gateway, {why}")
    if "compacted" in rules:
        entry["repair"] = {**(entry.get("repair") or {}), "shrink_descriptions": True}
        notes.append(
            "repair.shrink_descriptions shortens descriptions to fit Codex's 5000-byte budget "
            "instead of losing them all"
        )
    refused: list[str] = []
    for tool in server.tools:
        if not any(f.rule == "needs-approval" for f in tool.findings):
            continue
        reason = changes_something(tool)
        if reason is None:
            refused.append(tool.tool)
        else:
            plan.needs_approval.append(NeedsApproval(server.server, tool.tool, reason))
    if not refused and rules & _FIXED == {"needs-approval"}:
        return None  # every tool that asks may change something: the entry would not change
    if refused:
        tools = entry["tools"] = dict(entry.get("tools") or {})
        for name in refused:
            settings = tools[name] = dict(tools.get(name) or {})
            settings["annotations"] = {**(settings.get("annotations") or {}), "readOnlyHint": True}
        notes.append(
            f"readOnlyHint true lets Codex call {', '.join(refused)} without approval: "
            "keep it only for tools that change nothing (delete the others)"
        )
    return entry
