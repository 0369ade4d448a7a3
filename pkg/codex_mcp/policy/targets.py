"""What a name (or URI) a client sends stands for: the plain server's own names, or
behind a gateway the child and the child's own name (specs/policy.md, "Targets")."""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from typing import TYPE_CHECKING, Any, Protocol

from .rules import Kind, Rule, Target

if TYPE_CHECKING:
    from ..core.context import RequestContext
    from ..core.errors import McpError
    from ..core.jsonrpc import JsonObject
    from ..core.server import ServerCore
    from .coverage import Coverage


class Targets(Protocol):
    """`listed`: the name comes from a listing just made (nothing to look up again)."""

    async def tool(self, name: str, ctx: RequestContext, *, listed: bool = False) -> Target: ...
    async def prompt(self, name: str, ctx: RequestContext, *, listed: bool = False) -> Target: ...
    def resource(self, uri: str, ctx: RequestContext) -> Target: ...
    def rules(self) -> tuple[Rule, ...]:
        """Rules the provider's own settings imply (a gateway's entries), read per
        decision so a reload's apply at once."""
        ...

    def missing(self, error: McpError, target: Target) -> bool:
        """Does `error`, raised by the provider for `target`, say that nothing is there in
        words of its own (a gateway relays its child's)? The point then answers as it does
        for a hidden one, so the two cannot be told apart."""
        ...

    async def skills(self, uris: Sequence[str], ctx: RequestContext) -> set[str] | None:
        """The SKILL.md URIs of the served skills that may hold `uris` (`skill://` ones);
        None when they cannot be known (a gateway's child that does not come up)."""
        ...

    def servers(self) -> Sequence[str]:
        """The servers whose items are served (a gateway's configured children; none)."""
        ...

    async def inventory(self, core: ServerCore, coverage: Coverage) -> bool:
        """Add what the server serves to `coverage`, when it is known at start (False:
        known from the listings as they come, a gateway's)."""
        ...

    def up(self, ctx: RequestContext) -> Sequence[str]:
        """The servers whose items a listing made for `ctx` now holds."""
        ...


class OwnNames:
    """A server serving its own tools: the name is the tool."""

    async def tool(self, name: str, ctx: RequestContext, *, listed: bool = False) -> Target:
        return Target("tool", name)

    async def prompt(self, name: str, ctx: RequestContext, *, listed: bool = False) -> Target:
        return Target("prompt", name)

    def resource(self, uri: str, ctx: RequestContext) -> Target:
        return Target("resource", uri)

    def rules(self) -> tuple[Rule, ...]:
        return ()

    def missing(self, error: McpError, target: Target) -> bool:
        return False  # the core's own errors: what a hidden one gets already

    async def skills(self, uris: Sequence[str], ctx: RequestContext) -> set[str] | None:
        listed = await ctx.session.core.provider.list_skills(ctx)  # all known at once
        return {uri for skill in listed if isinstance(uri := skill.get("uri"), str)}

    def servers(self) -> Sequence[str]:
        return ()

    async def inventory(self, core: ServerCore, coverage: Coverage) -> bool:
        """Every listing of the provider, asked once outside any session."""
        from ..core.context import RequestContext
        from ..core.session import ServerSession
        from .coverage import folder_of

        provider = core.provider
        ctx = RequestContext(ServerSession(core, _Nowhere()), None, "tools/list", None)
        features = provider.features

        def named(kind: Kind, items: Sequence[JsonObject], key: str) -> list[Target]:
            return [Target(kind, item[key]) for item in items if isinstance(item.get(key), str)]

        if "tools" in features:
            coverage.add(named("tool", await provider.list_tools(ctx), "name"))
        if "prompts" in features:
            coverage.add(named("prompt", await provider.list_prompts(ctx), "name"))
        if "resources" in features:
            coverage.add(named("resource", await provider.list_resources(ctx), "uri"))
            templates = await provider.list_resource_templates(ctx)
            coverage.add(named("resource", templates, "uriTemplate"), patterns=True)
        if "skills" in features:  # a skill stands for the files in its folder too
            skills = named("resource", await provider.list_skills(ctx), "uri")
            coverage.add(skills)
            coverage.add([folder_of(skill) for skill in skills], patterns=True)
        return True

    def up(self, ctx: RequestContext) -> Sequence[str]:
        return ()


class _Nowhere:
    """The outbound of the context the start-up listing is asked in: nothing is sent."""

    def send(self, message: Any, related: Hashable = None) -> None:
        pass
