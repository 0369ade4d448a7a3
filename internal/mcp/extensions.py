"""What may extend a ServerCore, declared instead of patched (specs/design.md, "Extensions").

An extension says what it adds from a closed set of contributions, each a hook of
`Extension` it overrides (the defaults add nothing and cost nothing): request methods, the
`initialize` answer and what it waits for, a wrapper of every request the peer dispatches,
the session lifetime, and interceptors of the provider's operations. The core never hands
itself to an extension: it consumes what the extensions declared, composed once when it
starts (or opens its first session); after that nobody changes its method table. Only the
operations are folded again, from the same extensions in the same order, when one of them
asks (`ServerCore.refold`: a policy that starts or stops denying, the gateway's tasks once a
child offers them), so what passes through them never depends on who installed what first.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from enum import IntEnum
from typing import TYPE_CHECKING, ClassVar

from .calls import MethodEntry
from .jsonrpc import JsonObject

if TYPE_CHECKING:
    from .context import RequestContext
    from .provider import Provider
    from .session import ServerSession
    from .subscriptions import Subscription

CallTool = Callable[[str, JsonObject, "RequestContext"], Awaitable[JsonObject]]
ListItems = Callable[["RequestContext"], Awaitable[Sequence[JsonObject]]]
ReadResource = Callable[[str, "RequestContext"], Awaitable[list[JsonObject]]]
Subscribe = Callable[[str, "RequestContext"], Awaitable[bool | None]]
ListenStarted = Callable[["Subscription", "RequestContext"], Awaitable[None]]
GetSkill = Callable[[str, "RequestContext"], Awaitable[JsonObject]]
ReadDirectory = Callable[[str, "RequestContext"], Awaitable[Sequence[JsonObject]]]
GetPrompt = Callable[[str, dict[str, str], "RequestContext"], Awaitable[JsonObject]]
Complete = Callable[
    [JsonObject, JsonObject, dict[str, str], "RequestContext"], Awaitable[JsonObject | None]
]


class Stage(IntEnum):
    """Where an extension's operation interceptors sit, innermost first (then in the order
    the extensions were declared)."""

    #: Where a request goes: the gateway's 2025-11-25 task augmentation.
    ROUTE = 0
    #: Whether it may be served at all: the policy, around whatever serves it.
    DECIDE = 1


class Served:
    """The provider's operations that name or list what is served, as the method handlers of
    both eras reach them: the provider's own methods, or the extensions' interceptors folded
    around them (`ServerCore.served`)."""

    __slots__ = (
        "call_tool",
        "complete",
        "get_prompt",
        "get_skill",
        "list_prompts",
        "list_resource_templates",
        "list_resources",
        "list_skills",
        "list_tools",
        "listen_started",
        "read_directory",
        "read_resource",
        "subscribe",
    )

    call_tool: CallTool
    list_tools: ListItems
    list_resources: ListItems
    list_resource_templates: ListItems
    read_resource: ReadResource
    subscribe: Subscribe
    listen_started: ListenStarted
    list_skills: ListItems
    get_skill: GetSkill
    read_directory: ReadDirectory
    list_prompts: ListItems
    get_prompt: GetPrompt
    complete: Complete

    def __init__(self, provider: Provider, extensions: Sequence[Extension]) -> None:
        for name in Served.__slots__:
            step = getattr(provider, name)
            for extension in extensions:  # innermost first
                step = getattr(extension, name)(step)
            setattr(self, name, step)


class Extension:
    """Extends a ServerCore: override the contributions you make, then `core.extend(it)`
    before the core serves."""

    #: Where its operation interceptors sit.
    stage: ClassVar[Stage] = Stage.ROUTE
    #: Methods of the core (or of an extension declared before) that `methods` takes over;
    #: any other name the core serves already is refused, never silently replaced.
    replaces: ClassVar[frozenset[str]] = frozenset()

    # -- methods and the handshake ---------------------------------------------------
    def methods(self) -> Mapping[str, MethodEntry]:
        """Request methods it serves (the legacy era's table: a 2026-07-28 request never
        reaches them)."""
        return {}

    def initialize(
        self, session: ServerSession, params: JsonObject, result: JsonObject
    ) -> JsonObject:
        """The `initialize` answer for this session (what it declares, say), from the answer so
        far; the client's `params` as sent. Must not wait."""
        return result

    def ready(self, session: ServerSession) -> Awaitable[None] | None:
        """What the handshake (`initialize`; a 2026-07-28 `server/discover`) waits for
        before it answers (None: nothing; it is answered on the spot)."""
        return None

    # -- every request -----------------------------------------------------------------
    def request(self, method: str | None, entry: MethodEntry) -> MethodEntry:
        """The entry serving `method` (None: an entry that serves many: the 2026-07-28
        dispatch, the direct methods), as this extension wraps it; called once per entry when
        the core composes (observation times every request this way)."""
        return entry

    # -- the sessions' lifetime ------------------------------------------------------------
    def session_opened(self, session: ServerSession) -> None:
        """A session opened (a connection: stdio, one Mcp-Session-Id)."""

    def session_ended(self, session: ServerSession) -> None:
        """That session ended."""

    def stateless_opened(self) -> None:
        """A peer for one 2026-07-28 HTTP exchange was made."""

    async def start(self) -> None:
        """The core started (its provider too), before it serves; raising refuses the
        start (a configuration mistake found only now)."""

    async def aclose(self) -> None:
        """The core stopped (after its provider): release what the extension holds."""

    # -- the provider's operations: each gets the next step once per fold and returns what is
    # -- called instead (the step itself: nothing in the way) -------------------------------
    def call_tool(self, call_next: CallTool) -> CallTool:
        return call_next

    def list_tools(self, call_next: ListItems) -> ListItems:
        return call_next

    def list_resources(self, call_next: ListItems) -> ListItems:
        return call_next

    def list_resource_templates(self, call_next: ListItems) -> ListItems:
        return call_next

    def read_resource(self, call_next: ReadResource) -> ReadResource:
        return call_next

    def subscribe(self, call_next: Subscribe) -> Subscribe:
        return call_next

    def listen_started(self, call_next: ListenStarted) -> ListenStarted:
        return call_next

    def list_skills(self, call_next: ListItems) -> ListItems:
        return call_next

    def get_skill(self, call_next: GetSkill) -> GetSkill:
        return call_next

    def read_directory(self, call_next: ReadDirectory) -> ReadDirectory:
        return call_next

    def list_prompts(self, call_next: ListItems) -> ListItems:
        return call_next

    def get_prompt(self, call_next: GetPrompt) -> GetPrompt:
        return call_next

    def complete(self, call_next: Complete) -> Complete:
        return call_next


def overrides(extension: Extension, hook: str) -> bool:
    """Does `extension` contribute `hook` (a method of its own, not Extension's default)?"""
    return getattr(type(extension), hook) is not getattr(Extension, hook)


__all__ = ["Extension", "Served", "Stage", "overrides"]
