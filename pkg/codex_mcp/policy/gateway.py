"""A gateway's names for the policy: the child behind each served name and the child's
own name for it, and the rules its entries' tool lists imply (specs/policy.md, "Targets")."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .config import entry_rules
from .rules import Kind, Rule, Target

if TYPE_CHECKING:
    from ..core.context import RequestContext
    from ..gateway.provider import GatewayProvider
    from ..gateway.routing.catalog import Catalog

SEPARATOR = "__"  # gateway/routing/naming.py's; not imported, to keep this module light


class GatewayNames:
    def __init__(self, gateway: GatewayProvider) -> None:
        self.gateway = gateway
        self._rules: tuple[object, tuple[Rule, ...]] | None = None

    def rules(self) -> tuple[Rule, ...]:
        config = self.gateway.config  # replaced whole by a reload
        kept = self._rules
        if kept is None or kept[0] is not config:
            kept = self._rules = (config, entry_rules(config.servers))
        return kept[1]

    async def tool(self, name: str, ctx: RequestContext, *, listed: bool = False) -> Target:
        route = self.gateway.catalog(ctx.session).routes.get(name)
        if route is None and not listed:
            # Not routed yet (a child still listing, a tool it just added): the same fresh
            # listing the call itself would wait for, so the decision sees its route.
            await self.gateway.list_tools(ctx)
            route = self.gateway.catalog(ctx.session).routes.get(name)
        if route is not None:
            return Target("tool", name, route[0].name, route[1])
        return self._guessed("tool", name, self.gateway.catalog(ctx.session))

    async def prompt(self, name: str, ctx: RequestContext, *, listed: bool = False) -> Target:
        route = self.gateway.catalog(ctx.session).prompt_routes.get(name)
        if route is None and not listed:
            await self.gateway.list_prompts(ctx)
            route = self.gateway.catalog(ctx.session).prompt_routes.get(name)
        if route is not None:
            return Target("prompt", name, route[0].name, route[1])
        return self._guessed("prompt", name, self.gateway.catalog(ctx.session))

    def resource(self, uri: str, ctx: RequestContext) -> Target:
        route = self.gateway.catalog(ctx.session).resource_route(uri)
        if route is None:
            return Target("resource", uri)
        return Target("resource", uri, route[0].name, route[1])

    def _guessed(self, kind: Kind, name: str, catalog: Catalog) -> Target:
        """A name no route has: the child its prefix names (a down child's tool), so that
        rules on that child still apply to whatever the gateway answers."""
        if catalog.passthrough and len(catalog.namespaces) == 1:
            only = next(iter(catalog.namespaces.values()))
            return Target(kind, name, only.name, name)
        namespace, found, own = name.partition(SEPARATOR)
        child = catalog.namespaces.get(namespace) if found else None
        if child is None:
            return Target(kind, name)
        return Target(kind, name, child.name, own)
