"""A child's tool listing as the gateway serves it: each definition repaired once per
listing (`prepare_tools`: repairs and per-tool settings; the allow and deny lists are the
policy's rules, policy/config.py), a tool that
cannot be repaired left out on its own, and a warning for what Codex would still skip."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass

from codex_mcp.codex_compat.repair import RepairedTool, apply_tool_settings, repair_tool
from codex_mcp.codex_compat.schema import codex_parameters
from codex_mcp.core.jsonrpc import JsonObject
from codex_mcp.policy.config import hidden_by_entry

from ..config.json_file import nests_deeper_than
from ..config.model import ServerConfig

log = logging.getLogger("codex_mcp.gateway")


@dataclass(frozen=True, slots=True)
class ToolEntry:
    #: The child's own name for the tool (what a call sends it).
    name: str
    #: The definition as served, except its name: repaired, with the config's settings.
    definition: JsonObject


def prepare_tools(server: ServerConfig, tools: Sequence[JsonObject]) -> list[ToolEntry]:
    entries = []
    for tool in tools:
        repaired = _repaired(tool, server)
        if repaired.dropped is not None:
            log.warning("%s: a tool is left out: %s", server.name, repaired.dropped)
            continue
        name = repaired.tool["name"]  # allow/deny lists: the policy's (policy/config.py)
        if repaired.changes:
            log.debug(
                "%s: %s repaired: %s", server.name, name, "; ".join(map(str, repaired.changes))
            )
        definition = apply_tool_settings(repaired.tool, server.tool_settings(name)).tool
        if not hidden_by_entry(server, name):  # no warning about a tool nobody is shown
            _warn_about_codex(server, name, definition)
        entries.append(ToolEntry(name, definition))
    return entries


#: Deeper than this, a definition is left out: no real schema nests so far, the repairs
#: recurse, and orjson refuses to encode more than 254 levels (the listing adds a few).
MAX_DEFINITION_DEPTH = 128


def _repaired(tool: JsonObject, server: ServerConfig) -> RepairedTool:
    """`repair_tool`, except that a tool it cannot handle is left out on its own: one bad
    definition never costs the child's other tools."""
    name = tool.get("name") if isinstance(tool, dict) else None
    if nests_deeper_than(tool, MAX_DEFINITION_DEPTH):
        return RepairedTool(
            {}, [], f"{name!r}: its definition nests over {MAX_DEFINITION_DEPTH} levels"
        )
    try:
        return repair_tool(tool, server.repair)
    except Exception as exc:  # a repair's bug must cost this tool only
        return RepairedTool({}, [], f"{name!r}: it could not be repaired ({exc!r})")


#: The definition last checked per (server, tool): a listing that did not change a tool
#: does not pay for Codex's view of its schema again.
_checked: dict[tuple[str, str], JsonObject] = {}


def _warn_about_codex(server: ServerConfig, name: str, definition: JsonObject) -> None:
    key = (server.name, name)
    if _checked.get(key) == definition:
        return
    _checked[key] = definition
    seen = codex_parameters(definition.get("inputSchema"), server.repair.schema_max_bytes)
    if seen.rejected:
        log.warning("%s: Codex will skip tool %r: %s", server.name, name, seen.rejected)
    elif seen.compacted:
        log.warning(
            "%s: tool %r has a %d-byte input schema; Codex will compact it (%s). "
            'Set "repair": {"shrink_descriptions": true} to shorten its descriptions instead',
            server.name, name, seen.size, ", ".join(seen.compacted),
        )  # fmt: skip
