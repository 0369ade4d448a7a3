"""What `codex-mcp lint` and `codex-mcp doctor` say of pinning and of the MCP skills in Codex
(specs/trust.md): judged read-only against the lock (nothing is recorded), and read from the
skills manifest."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from codex_mcp.codex_compat.repair import apply_tool_settings, repair_tool
from codex_mcp.core.jsonrpc import JsonObject
from codex_mcp.gateway.children.tools import MAX_DEFINITION_DEPTH
from codex_mcp.gateway.config.json_file import nests_deeper_than
from codex_mcp.gateway.config.model import GatewayConfig, ServerConfig

from .codex_skills import DestinationError, SkillsFolder
from .lock import LockError, LockState, existing_locks, tool_pin
from .pinning import WITHHELD, Seen, judge, reason

#: What to run about a withheld tool, for a finding's fix.
FIX = "review the change with `codex-mcp trust`, then `codex-mcp trust --accept SERVER/TOOL`"


def withheld_tools(
    config: GatewayConfig, server: ServerConfig, tools: Sequence[JsonObject]
) -> dict[str, str]:
    """The tools of `server`'s listing (as it lists them) a gateway would withhold now ->
    why: each repaired and set as the gateway serves it, judged against the lock (each lock
    a gateway of `config` may use: the shell's, and the one a gateway Codex starts uses)."""
    mode = config.pinning_of(server)
    if mode == "off":
        return {}
    locks = existing_locks(config)
    states: list[tuple[LockState, str]] = []
    for lock, _whose in locks:
        where = f" (in {lock.shown})" if len(locks) > 1 else ""
        try:
            states.append((lock.read(), where))
        except LockError as error:
            unusable = f"the trust lock is unusable ({error})"
            return {str(tool.get("name")): unusable for tool in tools if isinstance(tool, dict)}
    found = {}
    for tool in tools:  # what the gateway leaves out, it leaves out (children/tools.py)
        if nests_deeper_than(tool, MAX_DEFINITION_DEPTH):
            continue
        try:
            repaired = repair_tool(tool, server.repair)
        except Exception:
            continue
        if repaired.dropped is not None:
            continue
        name = repaired.tool["name"]
        served = apply_tool_settings(repaired.tool, server.tool_settings(name)).tool
        seen = Seen(server.name, "tools", name, tool_pin(name, served))
        for state, where in states:
            verdict = judge(state, mode, seen)
            if verdict in WITHHELD:
                found[name] = reason(state, seen, verdict) + where
                break
    return found


def synced_skills(home: Path) -> list[tuple[str, str]]:
    """The MCP skills Codex lists from its folder (written by `codex-mcp skills sync`):
    (the name Codex shows, `server/path`), or none (none written, or a folder that cannot
    be read as ours)."""
    try:
        written = SkillsFolder(home).written()
    except (DestinationError, OSError):
        return []
    return sorted(
        (str(entry.get("name")), f"{entry.get('server')}/{entry.get('path')}")
        for entry in written.values()
    )
