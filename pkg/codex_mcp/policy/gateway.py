"""A gateway's names for the policy: the child behind each served name and the child's
own name for it, and the rules its entries' tool lists imply (specs/policy.md, "Targets")."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from ..core.jsonrpc import INVALID_PARAMS
from .config import entry_rules
from .rules import SEPARATOR, Kind, Rule, Target

if TYPE_CHECKING:
    from ..core.context import RequestContext
    from ..core.errors import McpError
    from ..core.server import ServerCore
    from ..gateway.provider import GatewayProvider
    from ..gateway.routing.catalog import Catalog
    from .coverage import Coverage

#: The codes a server answers "nothing at this URI" with (the older revisions' -32002 too).
NOT_FOUND_CODES = (INVALID_PARAMS, -32002)


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

    async def skills(self, uris: Sequence[str], ctx: RequestContext) -> set[str] | None:
        # The children those URIs name, listed live: one not up is started first (lazy,
        # stopped for idleness), as the request naming it would start it.
        return await self.gateway.skills_holding(uris, ctx)

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

    def servers(self) -> Sequence[str]:
        return [server.name for server in self.gateway.config.enabled_servers]

    async def inventory(self, core: ServerCore, coverage: Coverage) -> bool:
        return False  # its children list in the background: checked as listings come

    def up(self, ctx: RequestContext) -> Sequence[str]:
        children = self.gateway.children(ctx.session, start=False)
        return [child.name for child in children if child.connection is not None]

    def missing(self, error: McpError, target: Target) -> bool:
        """The child said nothing is at its own URI for the target (the protocol's
        not-found: -32602 or -32002 with `data.uri`), as the relay words it (its original
        kept in `data.original`) or passed through as the child said it."""
        if target.child is None:
            return False  # the gateway's own answer: the core's error
        data = error.data
        said: Any = data.get("original") if isinstance(data, dict) and "original" in data else None
        if said is None:
            said = {"code": error.code, "data": data}
        found = said.get("data") if isinstance(said, dict) else None
        return (
            said.get("code") in NOT_FOUND_CODES
            and isinstance(found, dict)
            and found.get("uri") == target.own_name
        )

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
