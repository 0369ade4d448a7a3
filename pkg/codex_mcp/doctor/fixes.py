"""The fix for each kind of finding, fitted to the entry it is about: a server Codex starts
itself, or our gateway, whose repairs have already run on what Codex receives (so "serve it
through the gateway" is no fix there, and a direct server is told so only when the gateway's
default repairs would in fact remove the finding: they are run on its definitions to see)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from codex_mcp.codex_compat.check import ToolReport
from codex_mcp.codex_compat.definition import definition_problems
from codex_mcp.codex_compat.policy import APPROVAL_ADVICE
from codex_mcp.codex_compat.repair import repair_tool
from codex_mcp.codex_compat.schema import codex_parameters

LINT_FIX = "`codex-mcp lint --fix` writes the entry"
IN_CHILD = "in the child server that lists it (its name before `__`)"
#: The same fix whatever the entry; None: nothing to do.
_FIXED: dict[str, str | None] = {
    "hashed": "rename the tool or the server so their names differ after sanitizing",
    "renamed": None,
    "structured-only": None,
    "per-session": None,
}


@dataclass(frozen=True, slots=True)
class Entry:
    """The config.toml entry a finding is about."""

    name: str
    gateway: bool


def fix_for(rule: str, severity: str, tools: Sequence[ToolReport], entry: Entry) -> str | None:
    """What to do about a finding of `rule` on `tools` (none: about the server)."""
    if rule in _FIXED:
        return _FIXED[rule]
    if rule == "needs-approval":
        return APPROVAL_ADVICE if severity == "warn" else None
    if rule == "poisoning":
        return _poisoning_fix(tools, entry)
    if rule == "duplicate":
        where = IN_CHILD if entry.gateway else "in the server"
        return f"Codex calls the first definition: remove the other {where}"
    if rule == "compacted":
        if entry.gateway:
            return (
                'set "repair": {"shrink_descriptions": true} in its child\'s entry of the .mcp.json'
            )
        return f"serve it through the codex-mcp gateway, which shrinks the schema ({LINT_FIX})"
    if rule in ("dropped", "server-lost", "lowered"):
        what = (
            "give the schema the types Codex needs" if rule == "lowered" else "fix its definition"
        )
        if entry.gateway:  # what Codex receives is already repaired
            return f"the gateway's repairs do not change this: {what} {IN_CHILD}"
        if tools and all(_repaired_away(rule, tool) for tool in tools):
            return (
                f"serve it through the codex-mcp gateway, which repairs it ({LINT_FIX}), or {what}"
            )
        return f"{what} in the server (the gateway's repairs do not change this)"
    return None


def _repaired_away(rule: str, tool: ToolReport) -> bool:
    """Whether the gateway's default repairs leave Codex nothing of `rule` to do."""
    repaired = repair_tool(tool.definition)
    if repaired.dropped is not None:
        return False
    if rule == "server-lost":
        return not definition_problems(repaired.tool)
    seen = codex_parameters(repaired.tool.get("inputSchema"))
    return seen.rejected is None and (rule == "dropped" or not seen.lowered)


def _poisoning_fix(tools: Sequence[ToolReport], entry: Entry) -> str:
    read = "read it whole (`codex-mcp lint --json` shows it, escaped); unless you trust the server"
    if not tools:  # a skill's description
        return f"{read}, do not use the skill"
    if entry.gateway:
        return (
            f'{read}, hide it in the .mcp.json: "tools": {{"TOOL": {{"hidden": true}}}} in its '
            'child\'s entry (TOOL: its name after `__`), or replace its "description" there'
        )
    names = ", ".join(f'"{t.tool}"' for t in tools)
    return f"{read}, leave it out: disabled_tools = [{names}] in [mcp_servers.{entry.name}]"
