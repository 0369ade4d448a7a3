"""What a set of children offers, merged and named, with the routes back to each child.

Tool definitions are repaired once per child listing (`prepare_tools`: repairs, allow and
deny lists, per-tool settings); names are assigned when the catalog is built, across every
child in config order, then each child's listing order (naming.NameTable), so one child's
tools never rename another's. Prompts are named the same way; resource URIs and templates
get the child's name as the first segment after the scheme (`file:///a` ->
`file://time//a`), so each stays unique per child and maps back to its owner. A passthrough
gateway (one child, `codex-mcp -- <server>`) keeps every name and URI as the child has it.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from codex_mcp.core.jsonrpc import JsonObject

from .codex.schema import codex_parameters
from .config.json_file import nests_deeper_than
from .config.model import ServerConfig
from .naming import NameTable, sanitize_name
from .repair import RepairedTool, apply_tool_settings, repair_tool

if TYPE_CHECKING:
    from .child import Child

log = logging.getLogger("codex_mcp.gateway")
_SCHEME_END = "://"


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
        name = repaired.tool["name"]
        if not server.tool_allowed(name):
            continue
        if repaired.changes:
            log.debug(
                "%s: %s repaired: %s", server.name, name, "; ".join(map(str, repaired.changes))
            )
        definition = apply_tool_settings(repaired.tool, server.tool_settings(name)).tool
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


def outer_uri(server: str, uri: str, passthrough: bool = False) -> str:
    """A child's URI (or URI template) as we serve it: its server's name after the scheme."""
    if passthrough:
        return uri
    namespace = sanitize_name(server)
    scheme, found, rest = uri.partition(_SCHEME_END)
    return f"{scheme}{_SCHEME_END}{namespace}/{rest}" if found else f"{namespace}:{uri}"


@dataclass
class Catalog:
    passthrough: bool = False
    tools: list[JsonObject] = field(default_factory=list)
    #: Exposed tool name -> (child, the child's name).
    routes: dict[str, tuple[Child, str]] = field(default_factory=dict)
    prompts: list[JsonObject] = field(default_factory=list)
    prompt_routes: dict[str, tuple[Child, str]] = field(default_factory=dict)
    resources: list[JsonObject] = field(default_factory=list)
    templates: list[JsonObject] = field(default_factory=list)
    #: URI namespace (the sanitized server name) -> child, up or not.
    namespaces: dict[str, Child] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)

    def resource_route(self, uri: str) -> tuple[Child, str] | None:
        """The child a URI (or URI template) of ours belongs to, and its own URI."""
        if self.passthrough:
            child = next(iter(self.namespaces.values()), None)
            return (child, uri) if child is not None else None
        scheme, found, rest = uri.partition(_SCHEME_END)
        if found:
            namespace, slash, inner = rest.partition("/")
            child = self.namespaces.get(namespace) if slash else None
            return (child, f"{scheme}{_SCHEME_END}{inner}") if child is not None else None
        namespace, colon, inner = uri.partition(":")
        child = self.namespaces.get(namespace) if colon else None
        return (child, inner) if child is not None else None


def build_catalog(
    children: Sequence[Child], *, passthrough: bool, reserved: Sequence[str] = ()
) -> Catalog:
    """The catalog of the children that are up (and the cached tools of those starting),
    in the order given (config order).
    `reserved` names (the gateway's own tools) are taken first."""
    catalog = Catalog(passthrough=passthrough)
    tools, prompts = NameTable(), NameTable()
    for name in reserved:
        tools.add("", name, prefix="")
    prefix = "" if passthrough else None
    for child in children:
        catalog.namespaces[sanitize_name(child.name)] = child
        for entry in child.current_tools:  # cached while it starts
            settings = child.server.tool_settings(entry.name)
            named = tools.add(
                child.name, entry.name, prefix=prefix, rename=settings.rename if settings else None
            )
            if named is not None:
                catalog.tools.append({**entry.definition, "name": named.name})
                catalog.routes[named.name] = (child, entry.name)
        if child.connection is None:
            continue
        for prompt in child.lists["prompts"] or ():
            raw = prompt.get("name")
            named = prompts.add(child.name, raw, prefix=prefix) if isinstance(raw, str) else None
            if named is not None:
                catalog.prompts.append({**prompt, "name": named.name})
                catalog.prompt_routes[named.name] = (child, raw)  # type: ignore[assignment]
        for resource in child.lists["resources"] or ():
            if isinstance(resource.get("uri"), str):
                outer = outer_uri(child.name, resource["uri"], passthrough)
                catalog.resources.append({**resource, "uri": outer})
        for template in child.lists["resourceTemplates"] or ():
            if isinstance(template.get("uriTemplate"), str):
                outer = outer_uri(child.name, template["uriTemplate"], passthrough)
                catalog.templates.append({**template, "uriTemplate": outer})
    catalog.warnings = tools.warnings + prompts.warnings
    return catalog
