"""The policy's one enforcement point: a provider around the served one, so that every
way to a tool, resource or prompt (tools/call in either era, a task-augmented call, a
direct method, resources/read, prompts/get, completion) and every listing goes through
the same decision: what a listing hides, a call by any name is refused (specs/policy.md,
"Enforcement")."""

from __future__ import annotations

from collections.abc import Awaitable, Sequence
from typing import TYPE_CHECKING, Any

from ..core.provider import Provider, ResourceNotFound, UnknownPrompt, UnknownTool
from ..core.skills import NotADirectory, UnknownSkill
from .caller import caller_of
from .decide import Policy
from .rules import Action, Kind, Target
from .skills import SCHEME, holders
from .targets import OwnNames, Targets

if TYPE_CHECKING:
    from ..core.context import RequestContext
    from ..core.jsonrpc import JsonObject
    from ..core.provider import Listener
    from ..core.server import ServerCore
    from ..core.session import ServerSession
    from ..core.subscriptions import Subscription


def _refused(kind: Kind, name: str) -> Exception:
    """A denied item is answered exactly as one that does not exist: the refusal says
    nothing a listing would not."""
    if kind == "tool":
        return UnknownTool(name)
    if kind == "prompt":
        return UnknownPrompt(name)
    return ResourceNotFound(name)


class PolicedProvider(Provider):
    def __init__(self, inner: Provider, policy: Policy, targets: Targets | None = None) -> None:
        super().__init__()
        self.inner = inner
        self.targets: Targets = targets or OwnNames()
        self.policy = policy  # binds the call path (rebind)

    @property
    def policy(self) -> Policy:
        return self._policy

    @policy.setter
    def policy(self, policy: Policy) -> None:
        self._policy = policy
        self.rebind()

    def rebind(self) -> None:
        """Bind the call path to what the policy and the targets' rules are now: when
        nothing could deny, `call_tool` is the served provider's own bound method, so a
        relayed call pays no frame of ours (bench/gateway_instructions.py: ~3.8k
        instructions a call); otherwise the class's, which decides. Called when the policy
        is set and when a gateway's configuration (its entries' rules) is replaced."""
        if self._open:
            self.__dict__["call_tool"] = self.inner.call_tool
        else:
            self.__dict__.pop("call_tool", None)

    def __getattr__(self, name: str) -> Any:
        # What the observers and the status page read of the served provider (its
        # children, its app-servers) reads through.
        return getattr(self.inner, name)

    async def _allowed(self, target: Target, action: Action, ctx: RequestContext) -> bool:
        verdict = await self.policy.decide(caller_of(ctx), target, action, self.targets.rules())
        return verdict.allowed

    @property
    def _open(self) -> bool:
        """Nothing could deny (a gateway without tool lists, no rule, no hook): listings
        and calls are the served provider's own (a listing's identity is what the core
        caches its encoding by)."""
        return self.policy.allows_everything and not self.targets.rules()

    async def _visible(
        self, items: Sequence[JsonObject], key: str, kind: Kind, ctx: RequestContext
    ) -> Sequence[JsonObject]:
        if self._open:
            return items
        names = [item.get(key) for item in items]
        skills = await self._skills(kind, [n for n in names if isinstance(n, str)], ctx)
        # Each item is decided by its name and (a skill's file or folder) by the SKILL.md
        # of every skill holding it; a name several items share is asked once.
        asked: dict[str, int] = {}
        for name in names:
            if isinstance(name, str):
                for each in (name, *holders(name, skills)):
                    asked.setdefault(each, len(asked))
        targets = [await self._target(kind, name, ctx, listed=True) for name in asked]
        verdicts = await self.policy.decide_all(
            caller_of(ctx), targets, "list", self.targets.rules()
        )
        return [
            item
            for item, name in zip(items, names, strict=True)
            if isinstance(name, str)
            and all(verdicts[asked[each]].allowed for each in (name, *holders(name, skills)))
        ]

    async def _skills(self, kind: Kind, names: Sequence[str], ctx: RequestContext) -> set[str]:
        """The served skills' SKILL.md URIs, when any of `names` could be in a skill."""
        if kind != "resource" or "skills" not in self.inner.features:
            return set()
        if not any(name.startswith(SCHEME) for name in names):
            return set()
        listed = await self.inner.list_skills(ctx)
        return {uri for skill in listed if isinstance(uri := skill.get("uri"), str)}

    async def _target(
        self, kind: Kind, name: str, ctx: RequestContext, *, listed: bool = False
    ) -> Target:
        if kind == "tool":
            return await self.targets.tool(name, ctx, listed=listed)
        if kind == "prompt":
            return await self.targets.prompt(name, ctx, listed=listed)
        return self.targets.resource(name, ctx)

    async def _check(
        self, kind: Kind, name: str, ctx: RequestContext, refusal: Exception | None = None
    ) -> None:
        """Raises `refusal` (by default: what an unknown `name` of `kind` gets) unless
        using it is allowed (a skill's file or folder: and its skills' SKILL.md)."""
        if self._open:
            return
        held = holders(name, await self._skills(kind, [name], ctx))
        if held:
            targets = [await self._target(kind, each, ctx) for each in (name, *held)]
            verdicts = await self.policy.decide_all(
                caller_of(ctx), targets, "call", self.targets.rules()
            )
            allowed = all(verdict.allowed for verdict in verdicts)
        else:
            allowed = await self._allowed(await self._target(kind, name, ctx), "call", ctx)
        if not allowed:
            raise refusal if refusal is not None else _refused(kind, name)

    # -- what is served, decided ----------------------------------------------------
    async def list_tools(self, ctx: RequestContext) -> Sequence[JsonObject]:
        return await self._visible(await self.inner.list_tools(ctx), "name", "tool", ctx)

    def call_tool(
        self, name: str, arguments: JsonObject, ctx: RequestContext
    ) -> Awaitable[JsonObject]:
        if self._open:  # the call's own awaitable, as unwrapped
            return self.inner.call_tool(name, arguments, ctx)
        return self._call_tool(name, arguments, ctx)

    async def _call_tool(self, name: str, arguments: JsonObject, ctx: RequestContext) -> JsonObject:
        await self._check("tool", name, ctx)
        return await self.inner.call_tool(name, arguments, ctx)

    async def list_resources(self, ctx: RequestContext) -> Sequence[JsonObject]:
        return await self._visible(await self.inner.list_resources(ctx), "uri", "resource", ctx)

    async def list_resource_templates(self, ctx: RequestContext) -> Sequence[JsonObject]:
        listed = await self.inner.list_resource_templates(ctx)
        return await self._visible(listed, "uriTemplate", "resource", ctx)

    async def read_resource(self, uri: str, ctx: RequestContext) -> list[JsonObject]:
        await self._check("resource", uri, ctx)
        return await self.inner.read_resource(uri, ctx)

    async def subscribe(self, uri: str, ctx: RequestContext) -> None:
        await self._check("resource", uri, ctx)
        await self.inner.subscribe(uri, ctx)

    async def unsubscribe(self, uri: str, ctx: RequestContext) -> None:
        await self.inner.unsubscribe(uri, ctx)

    async def listen_started(self, subscription: Subscription, ctx: RequestContext) -> None:
        # A listen names resources as a subscribe does: the same decision for each.
        if not self._open:
            for uri in subscription.resources:
                await self._check("resource", uri, ctx)
        await self.inner.listen_started(subscription, ctx)

    def listen_ended(self, subscription: Subscription) -> None:
        self.inner.listen_ended(subscription)

    # A skill is its SKILL.md resource and the files beside it: decided as resources.
    async def list_skills(self, ctx: RequestContext) -> Sequence[JsonObject]:
        return await self._visible(await self.inner.list_skills(ctx), "uri", "resource", ctx)

    async def get_skill(self, uri: str, ctx: RequestContext) -> JsonObject:
        await self._check("resource", uri, ctx, UnknownSkill(uri))
        return await self.inner.get_skill(uri, ctx)

    async def read_directory(self, uri: str, ctx: RequestContext) -> Sequence[JsonObject]:
        await self._check("resource", uri, ctx, NotADirectory(uri))
        listed = await self.inner.read_directory(uri, ctx)
        return await self._visible(listed, "uri", "resource", ctx)

    async def list_prompts(self, ctx: RequestContext) -> Sequence[JsonObject]:
        return await self._visible(await self.inner.list_prompts(ctx), "name", "prompt", ctx)

    async def get_prompt(
        self, name: str, arguments: dict[str, str], ctx: RequestContext
    ) -> JsonObject:
        await self._check("prompt", name, ctx)
        return await self.inner.get_prompt(name, arguments, ctx)

    async def complete(
        self,
        ref: JsonObject,
        argument: JsonObject,
        context_arguments: dict[str, str],
        ctx: RequestContext,
    ) -> JsonObject | None:
        # Completing a prompt's or a resource template's argument is using it.
        if ref.get("type") == "ref/prompt" and isinstance(ref.get("name"), str):
            await self._check("prompt", ref["name"], ctx)
        elif ref.get("type") == "ref/resource" and isinstance(ref.get("uri"), str):
            await self._check("resource", ref["uri"], ctx)
        return await self.inner.complete(ref, argument, context_arguments, ctx)

    # -- everything else is the served provider's ----------------------------------------
    @property
    def features(self) -> frozenset[str]:
        return self.inner.features

    def add_listener(self, listener: Listener) -> None:
        self.inner.add_listener(listener)

    def notify_list_changed(self, kind: Any) -> None:
        self.inner.notify_list_changed(kind)

    def notify_resource_updated(self, uri: str) -> None:
        self.inner.notify_resource_updated(uri)

    async def start(self) -> None:
        await self.inner.start()

    async def stop(self) -> None:
        try:
            await self.inner.stop()
        finally:
            await self.policy.close()

    def open_session(self, session: ServerSession) -> None:
        self.inner.open_session(session)

    async def close_session(self, session: ServerSession) -> None:
        await self.inner.close_session(session)

    def closes_sessions(self) -> bool:
        return self.inner.closes_sessions()

    async def set_log_level(self, level: str, ctx: RequestContext) -> None:
        await self.inner.set_log_level(level, ctx)

    def roots_changed(self, session: ServerSession) -> None:
        self.inner.roots_changed(session)


async def permit_call(core: ServerCore, name: str, ctx: RequestContext) -> None:
    """The policy's decision on calling tool `name`, for a way to a tool that does not pass
    through the provider's call_tool (a 2025-11-25 task-augmented call the gateway relays
    itself): raises the refusal a call would get."""
    provider = core.provider
    if isinstance(provider, PolicedProvider) and not provider._open:
        await provider._check("tool", name, ctx)


def served(provider: Provider) -> Provider:
    """The provider a policy wraps (itself when none does): what observers attach to."""
    return provider.inner if isinstance(provider, PolicedProvider) else provider
