"""The policy's one enforcement point: an extension of the core (core/extensions.py) whose
interceptors stand around the provider's operations, so that every way to a tool, resource
or prompt (tools/call in either era, a task-augmented call, a direct method, resources/read,
subscribe, listen, prompts/get, completion, skills) and every listing goes through the same
decision: what a listing hides, a use by any name is refused (specs/policy.md,
"Enforcement"). While nothing could deny, it puts nothing in the way at all."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import TYPE_CHECKING, TypeVar

from ..core.errors import McpError
from ..core.extensions import (
    CallTool,
    Complete,
    Extension,
    GetPrompt,
    GetSkill,
    ListenStarted,
    ListItems,
    ReadDirectory,
    ReadResource,
    Stage,
    Subscribe,
)
from ..core.provider import ResourceNotFound, UnknownPrompt, UnknownTool
from ..core.skills import NotADirectory, UnknownSkill
from .caller import caller_of
from .coverage import Coverage, folder_of
from .decide import Policy
from .rules import Action, Kind, Target, Verdict
from .skills import SCHEME, holders
from .targets import OwnNames, Targets

if TYPE_CHECKING:
    from ..core.context import RequestContext
    from ..core.jsonrpc import JsonObject
    from ..core.server import ServerCore
    from ..core.subscriptions import Subscription


T = TypeVar("T")
#: What a use of a URI that names nothing answers (ResourceNotFound, UnknownSkill, ...).
Missing = Callable[[str], McpError]


def _refused(kind: Kind, name: str) -> Exception:
    """A denied item is answered exactly as one that does not exist: the refusal says
    nothing a listing would not."""
    if kind == "tool":
        return UnknownTool(name)
    if kind == "prompt":
        return UnknownPrompt(name)
    return ResourceNotFound(name)


class PolicyPoint(Extension):
    """Decides for one core: declared when anything could be denied (or, on a gateway,
    always: its entries' tool lists are rules a reload may bring)."""

    stage = Stage.DECIDE

    def __init__(self, core: ServerCore, policy: Policy, targets: Targets | None = None) -> None:
        self.core = core
        self.targets: Targets = targets or OwnNames()
        self._policy = policy
        #: The file's rules that name items, still to be checked against what is listed.
        self._coverage: Coverage | None = None

    @property
    def policy(self) -> Policy:
        return self._policy

    @policy.setter
    def policy(self, policy: Policy) -> None:
        self._policy = policy
        self.core.refold()  # it may start or stop denying

    @property
    def open(self) -> bool:
        """Nothing could deny (no rule, no hook, default allow, no gateway tool lists): the
        point folds no interceptor at all (a relayed call pays no frame of the policy's;
        a listing is the provider's own, whose identity the core caches its encoding by)."""
        return self.policy.allows_everything and not self.targets.rules()

    async def aclose(self) -> None:
        await self.policy.close()

    async def start(self) -> None:
        """A rule of the policy file that names nothing the server could serve stops the
        start with one line (coverage.py); behind a gateway, it is checked as its
        children's listings come, and said once."""
        config = self.policy.config
        coverage = Coverage(config.rules, config.source, self.targets.servers())
        if not coverage.pending:
            return
        from ..launch import StartupError

        mistake = coverage.refuse_unknown_servers()
        if mistake is None and await self.targets.inventory(self.core, coverage):
            mistake = coverage.unmatched()
        elif mistake is None:
            self._coverage = coverage
        if mistake is not None:
            raise StartupError(mistake)

    # -- the decision ----------------------------------------------------------------------
    async def _target(
        self, kind: Kind, name: str, ctx: RequestContext, *, listed: bool = False
    ) -> Target:
        if kind == "tool":
            return await self.targets.tool(name, ctx, listed=listed)
        if kind == "prompt":
            return await self.targets.prompt(name, ctx, listed=listed)
        return self.targets.resource(name, ctx)

    async def _skills(
        self, kind: Kind, names: Sequence[str], ctx: RequestContext
    ) -> set[str] | None:
        """The SKILL.md URIs of the served skills that may hold any of `names`; None when
        they cannot be known (a gateway's child that does not come up): then no `skill://`
        name is allowed."""
        if kind != "resource" or "skills" not in self.core.provider.features:
            return set()
        wanted = [name for name in names if name.startswith(SCHEME)]
        return await self.targets.skills(wanted, ctx) if wanted else set()

    async def allows(self, kind: Kind, name: str, ctx: RequestContext) -> Target | None:
        """What `name` stands for, when using it is allowed (a skill's file or folder: and
        its skills' SKILL.md too); None when it is not."""
        target = await self._target(kind, name, ctx)
        targets = [target]
        skills = await self._skills(kind, [name], ctx)
        if skills is None:
            return None
        for each in holders(name, skills):
            targets.append(await self._target(kind, each, ctx))
        verdicts = await self._decide(targets, "call", ctx)
        return target if all(verdict.allowed for verdict in verdicts) else None

    async def check(
        self, kind: Kind, name: str, ctx: RequestContext, refusal: Exception | None = None
    ) -> Target:
        """What `name` stands for; raises `refusal` (by default: what an unknown `name` of
        `kind` gets) unless using it is allowed."""
        target = await self.allows(kind, name, ctx)
        if target is None:
            raise refusal if refusal is not None else _refused(kind, name)
        return target

    async def visible(
        self, items: Sequence[JsonObject], key: str, kind: Kind, ctx: RequestContext
    ) -> Sequence[JsonObject]:
        """The items of a listing the decision allows with action `list`: each by its name
        and (a skill's file or folder) by the SKILL.md of every skill holding it; a name
        several items share is asked once."""
        names = [item.get(key) for item in items]
        known = await self._skills(kind, [n for n in names if isinstance(n, str)], ctx)
        if known is None:  # what holds them cannot be known: no skill's file is shown
            names = [None if isinstance(n, str) and n.startswith(SCHEME) else n for n in names]
        skills = known or set()
        asked: dict[str, int] = {}
        for name in names:
            if isinstance(name, str):
                for each in (name, *holders(name, skills)):
                    asked.setdefault(each, len(asked))
        targets = [await self._target(kind, name, ctx, listed=True) for name in asked]
        if self._coverage is not None:
            self._seen(kind, key, targets, ctx)
        verdicts = await self._decide(targets, "list", ctx)
        return [
            item
            for item, name in zip(items, names, strict=True)
            if isinstance(name, str)
            and all(verdicts[asked[each]].allowed for each in (name, *holders(name, skills)))
        ]

    def _seen(self, kind: Kind, key: str, targets: list[Target], ctx: RequestContext) -> None:
        """A listing came: the rules still unchecked are checked against what it held."""
        coverage = self._coverage
        assert coverage is not None
        coverage.add(targets, patterns=key == "uriTemplate")
        if ctx.method == "skills/list":  # a skill stands for the files in its folder too
            coverage.add([folder_of(target) for target in targets], patterns=True)
        coverage.seen(kind, self.targets.up(ctx))
        if not coverage.pending:
            self._coverage = None

    async def _decide(
        self, targets: list[Target], action: Action, ctx: RequestContext
    ) -> list[Verdict]:
        policy = self.policy
        if len(targets) == 1:
            return [await policy.decide(caller_of(ctx), targets[0], action, self.targets.rules())]
        return await policy.decide_all(caller_of(ctx), targets, action, self.targets.rules())

    # -- the interceptors (none while open) ---------------------------------------------------
    def call_tool(self, call_next: CallTool) -> CallTool:
        if self.open:
            return call_next
        check = self.check

        async def decided(name: str, arguments: JsonObject, ctx: RequestContext) -> JsonObject:
            await check("tool", name, ctx)
            return await call_next(name, arguments, ctx)

        return decided

    def _listing(self, call_next: ListItems, key: str, kind: Kind) -> ListItems:
        if self.open:
            return call_next
        visible = self.visible

        async def listed(ctx: RequestContext) -> Sequence[JsonObject]:
            return await visible(await call_next(ctx), key, kind, ctx)

        return listed

    def list_tools(self, call_next: ListItems) -> ListItems:
        return self._listing(call_next, "name", "tool")

    def list_resources(self, call_next: ListItems) -> ListItems:
        return self._listing(call_next, "uri", "resource")

    def list_resource_templates(self, call_next: ListItems) -> ListItems:
        return self._listing(call_next, "uriTemplate", "resource")

    def list_skills(self, call_next: ListItems) -> ListItems:
        # A skill is its SKILL.md resource and the files beside it: decided as resources.
        return self._listing(call_next, "uri", "resource")

    def list_prompts(self, call_next: ListItems) -> ListItems:
        return self._listing(call_next, "name", "prompt")

    def read_resource(self, call_next: ReadResource) -> ReadResource:
        if self.open:
            return call_next
        return self._answered_as_missing(call_next, ResourceNotFound)

    def get_skill(self, call_next: GetSkill) -> GetSkill:
        if self.open:
            return call_next
        return self._answered_as_missing(call_next, UnknownSkill)

    def read_directory(self, call_next: ReadDirectory) -> ReadDirectory:
        if self.open:
            return call_next
        visible = self.visible
        read = self._answered_as_missing(call_next, NotADirectory)

        async def listed(uri: str, ctx: RequestContext) -> Sequence[JsonObject]:
            return await visible(await read(uri, ctx), "uri", "resource", ctx)

        return listed

    def _answered_as_missing(
        self, call_next: Callable[[str, RequestContext], Awaitable[T]], missing: Missing
    ) -> Callable[[str, RequestContext], Awaitable[T]]:
        """A use of a URI decided, refused as `missing(uri)`; and what the provider says
        of a URI that names nothing, in words of its own (a gateway's child's), answered
        the same way, so that hidden and missing cannot be told apart."""
        check, targets = self.check, self.targets

        async def used(uri: str, ctx: RequestContext) -> T:
            target = await check("resource", uri, ctx, missing(uri))
            try:
                return await call_next(uri, ctx)
            except McpError as error:
                if targets.missing(error, target):
                    raise missing(uri) from None
                raise

        return used

    def subscribe(self, call_next: Subscribe) -> Subscribe:
        if self.open:
            return call_next
        allows = self.allows

        async def subscribe(uri: str, ctx: RequestContext) -> bool | None:
            if await allows("resource", uri, ctx) is None:
                return False  # answered as a subscribe of an unknown URI is; nothing kept
            return await call_next(uri, ctx)

        return subscribe

    def listen_started(self, call_next: ListenStarted) -> ListenStarted:
        if self.open:
            return call_next
        allows = self.allows

        async def listen(subscription: Subscription, ctx: RequestContext) -> None:
            # A listen names resources as a subscribe does: acknowledged as named (as one
            # naming an unknown URI is), a hidden one followed by nothing.
            named = subscription.resources
            kept = frozenset([uri for uri in named if await allows("resource", uri, ctx)])
            if kept != named:
                subscription.resources = kept
            await call_next(subscription, ctx)

        return listen

    def get_prompt(self, call_next: GetPrompt) -> GetPrompt:
        if self.open:
            return call_next
        check = self.check

        async def get(name: str, arguments: dict[str, str], ctx: RequestContext) -> JsonObject:
            await check("prompt", name, ctx)
            return await call_next(name, arguments, ctx)

        return get

    def complete(self, call_next: Complete) -> Complete:
        if self.open:
            return call_next
        allows = self.allows

        async def complete(
            ref: JsonObject, argument: JsonObject, context: dict[str, str], ctx: RequestContext
        ) -> JsonObject | None:
            # Completing a prompt's or a resource template's argument is using it; a hidden
            # one completes to nothing, as an unknown one does.
            prompt = ref.get("type") == "ref/prompt"
            kind: Kind = "prompt" if prompt else "resource"
            named = ref.get("name" if prompt else "uri")
            if isinstance(named, str) and await allows(kind, named, ctx) is None:
                return None
            return await call_next(ref, argument, context, ctx)

        return complete
