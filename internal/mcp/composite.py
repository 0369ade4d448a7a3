"""CompositeProvider: several providers served as one, calls routed by an index of the last
listing (specs/design.md, "Providers"; decision 13)."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Coroutine, Sequence
from typing import TYPE_CHECKING, Any

from . import uri_template
from .jsonrpc import JsonObject
from .provider import Provider, ResourceNotFound, UnknownPrompt, UnknownTool
from .skills import NotADirectory, UnknownSkill

if TYPE_CHECKING:
    from .context import RequestContext
    from .session import ServerSession

log = logging.getLogger("codex_mcp.provider")


class CompositeProvider(Provider):
    def __init__(self, providers: Sequence[Provider]) -> None:
        super().__init__()
        self.providers = list(providers)
        self._tools: dict[str, Provider] | None = None
        self._prompts: dict[str, Provider] | None = None
        self._resources: dict[str, Provider] | None = None
        self._templates: list[tuple[str, Provider]] | None = None
        for provider in self.providers:
            provider.add_listener(self._relay)

    @property
    def features(self) -> frozenset[str]:
        out: frozenset[str] = frozenset()
        for provider in self.providers:
            out |= provider.features
        return out

    def _relay(self, kind: str, uri: str | None) -> None:
        if kind == "tools":
            self._tools = None
        elif kind == "prompts":
            self._prompts = None
        elif kind == "resources":
            self._resources = self._templates = None
        for listener in list(self._listeners):
            listener(kind, uri)

    # -- lifetime --------------------------------------------------------------
    async def start(self) -> None:
        started: list[Provider] = []
        try:
            for provider in self.providers:
                await provider.start()
                started.append(provider)
        except BaseException:
            for provider in reversed(started):
                await _quietly(provider.stop(), provider)
            raise

    async def stop(self) -> None:
        for provider in reversed(self.providers):
            await _quietly(provider.stop(), provider)

    def open_session(self, session: ServerSession) -> None:
        for provider in self.providers:
            try:
                provider.open_session(session)
            except Exception:
                log.exception(
                    "%s failed to open a session", _name(provider), extra=session.log_extra
                )

    async def close_session(self, session: ServerSession) -> None:
        for provider in reversed(self.providers):
            await _quietly(provider.close_session(session), provider)

    def closes_sessions(self) -> bool:
        return any(provider.closes_sessions() for provider in self.providers)

    def roots_changed(self, session: ServerSession) -> None:
        for provider in self.providers:
            try:
                provider.roots_changed(session)
            except Exception:
                log.exception(
                    "%s failed on roots_changed", _name(provider), extra=session.log_extra
                )

    async def set_log_level(self, level: str, ctx: RequestContext) -> None:
        await self._each(
            "setting the log level", ctx, [p.set_log_level(level, ctx) for p in self.providers]
        )

    # -- tools -----------------------------------------------------------------
    async def list_tools(self, ctx: RequestContext) -> Sequence[JsonObject]:
        merged, self._tools = await self._listed("tools", "name", ctx)
        return merged

    def call_tool(
        self, name: str, arguments: JsonObject, ctx: RequestContext
    ) -> Awaitable[JsonObject]:
        provider = self._tools.get(name) if self._tools is not None else None
        if provider is not None:
            return provider.call_tool(name, arguments, ctx)
        return self._call_after_listing(name, arguments, ctx)

    async def _call_after_listing(
        self, name: str, arguments: JsonObject, ctx: RequestContext
    ) -> JsonObject:
        await self.list_tools(ctx)
        provider = self._tools.get(name) if self._tools is not None else None
        if provider is None:
            raise UnknownTool(name)
        return await provider.call_tool(name, arguments, ctx)

    # -- prompts ---------------------------------------------------------------
    async def list_prompts(self, ctx: RequestContext) -> Sequence[JsonObject]:
        merged, self._prompts = await self._listed("prompts", "name", ctx)
        return merged

    async def get_prompt(
        self, name: str, arguments: dict[str, str], ctx: RequestContext
    ) -> JsonObject:
        if self._prompts is None or name not in self._prompts:
            await self.list_prompts(ctx)
        provider = self._prompts.get(name) if self._prompts is not None else None
        if provider is None:
            raise UnknownPrompt(name)
        return await provider.get_prompt(name, arguments, ctx)

    # -- resources -------------------------------------------------------------
    async def list_resources(self, ctx: RequestContext) -> Sequence[JsonObject]:
        merged, self._resources = await self._listed("resources", "uri", ctx)
        return merged

    async def list_resource_templates(self, ctx: RequestContext) -> Sequence[JsonObject]:
        merged, index = await self._listed("resource_templates", "uriTemplate", ctx)
        self._templates = list(index.items())
        return merged

    async def read_resource(self, uri: str, ctx: RequestContext) -> list[JsonObject]:
        provider = self._resource_owner(uri)
        if provider is None and (self._resources is None or self._templates is None):
            await asyncio.gather(self.list_resources(ctx), self.list_resource_templates(ctx))
            provider = self._resource_owner(uri)
        if provider is None:
            raise ResourceNotFound(uri)
        return await provider.read_resource(uri, ctx)

    def _resource_owner(self, uri: str) -> Provider | None:
        if self._resources is not None and uri in self._resources:
            return self._resources[uri]
        for template, provider in self._templates or ():
            if uri_template.match(template, uri) is not None:
                return provider
        return None

    async def subscribe(self, uri: str, ctx: RequestContext) -> None:
        provider = self._resource_owner(uri)
        if provider is not None:
            await provider.subscribe(uri, ctx)

    async def unsubscribe(self, uri: str, ctx: RequestContext) -> None:
        provider = self._resource_owner(uri)
        if provider is not None:
            await provider.unsubscribe(uri, ctx)

    # -- skills ----------------------------------------------------------------
    async def list_skills(self, ctx: RequestContext) -> Sequence[JsonObject]:
        merged, _index = await self._listed("skills", "uri", ctx)
        return merged

    async def get_skill(self, uri: str, ctx: RequestContext) -> JsonObject:
        """The first provider serving a skill at `uri` answers (a skill need not be listed)."""
        for provider in self._serving("skills"):
            try:
                return await provider.get_skill(uri, ctx)
            except UnknownSkill:
                continue
        raise UnknownSkill(uri)

    async def read_directory(self, uri: str, ctx: RequestContext) -> Sequence[JsonObject]:
        for provider in self._serving("directories"):
            try:
                return await provider.read_directory(uri, ctx)
            except NotADirectory:
                continue
        raise NotADirectory(uri)

    def _serving(self, feature: str) -> list[Provider]:
        return [provider for provider in self.providers if feature in provider.features]

    # -- completion ------------------------------------------------------------
    async def complete(
        self,
        ref: JsonObject,
        argument: JsonObject,
        context_arguments: dict[str, str],
        ctx: RequestContext,
    ) -> JsonObject | None:
        owner = self._completion_owner(ref)
        if owner is not None:
            return await owner.complete(ref, argument, context_arguments, ctx)
        for provider in self.providers:  # nothing listed yet: whoever answers first
            completion = await provider.complete(ref, argument, context_arguments, ctx)
            if completion is not None:
                return completion
        return None

    def _completion_owner(self, ref: JsonObject) -> Provider | None:
        if ref.get("type") == "ref/prompt":
            return (self._prompts or {}).get(str(ref.get("name")))
        uri = str(ref.get("uri"))
        for template, provider in self._templates or ():
            if template == uri:
                return provider
        return (self._resources or {}).get(uri)

    # -- helpers ---------------------------------------------------------------
    async def _listed(
        self, kind: str, key: str, ctx: RequestContext
    ) -> tuple[list[JsonObject], dict[str, Provider]]:
        """Every provider's `list_<kind>` at once, merged by `key` (with its index)."""
        calls = [getattr(p, f"list_{kind}")(ctx) for p in self.providers]
        listings = await self._each(f"listing {kind.replace('_', ' ')}", ctx, calls)
        return _merge(self.providers, listings, key)

    async def _each(
        self, what: str, ctx: RequestContext, calls: list[Coroutine[Any, Any, Any]]
    ) -> list[Sequence[JsonObject] | None]:
        """Await every provider's call at once; a failure is logged and gives None."""
        outcomes = await asyncio.gather(*calls, return_exceptions=True)
        results: list[Sequence[JsonObject] | None] = []
        for provider, outcome in zip(self.providers, outcomes, strict=True):
            if isinstance(outcome, BaseException):
                log.warning(
                    "%s: %s failed: %s",
                    _name(provider),
                    what,
                    outcome,
                    extra=ctx.session.log_extra,
                )
                results.append(None)
            else:
                results.append(outcome)
        return results


def _merge(
    providers: list[Provider], listings: list[Sequence[JsonObject] | None], key: str
) -> tuple[list[JsonObject], dict[str, Provider]]:
    """The merged listing (first wins on a duplicate) and its name -> provider index."""
    index: dict[str, Provider] = {}
    merged: list[JsonObject] = []
    for provider, listing in zip(providers, listings, strict=True):
        for item in listing or ():
            name = item.get(key)
            if not isinstance(name, str):
                continue
            if name in index:
                log.warning("%s %r from %s hidden by an earlier one", key, name, _name(provider))
                continue
            index[name] = provider
            merged.append(item)
    return merged, index


async def _quietly(work: Awaitable[None], provider: Provider) -> None:
    try:
        await work
    except Exception:
        log.exception("%s failed to stop", _name(provider))


def _name(provider: Provider) -> str:
    return getattr(provider, "name", None) or type(provider).__name__


__all__ = ["CompositeProvider"]
