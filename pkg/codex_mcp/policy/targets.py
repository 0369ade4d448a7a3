"""What a name (or URI) a client sends stands for: the plain server's own names, or
behind a gateway the child and the child's own name (specs/policy.md, "Targets")."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Protocol

from .rules import Rule, Target

if TYPE_CHECKING:
    from ..core.context import RequestContext
    from ..core.errors import McpError


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
