"""What a set of children offers, merged and named, with the routes back to each child
(specs/gateway.md, "Serving": Catalog)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from codex_mcp.core.jsonrpc import JsonObject

from ..children.child import Child
from .naming import NameTable, sanitize_name

_SCHEME_END = "://"


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
    """The catalog of the children that are up (and the cached tools of those starting), in
    the order given (config order); `reserved` names (the gateway's own tools) go first."""
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
