"""Where tools, resources and prompts come from, and their lifetime hooks (specs/design.md,
"Providers")."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import TYPE_CHECKING, Literal

from .errors import McpError
from .jsonrpc import INVALID_PARAMS, JsonObject, invalid_params
from .skills import NotADirectory, UnknownSkill

if TYPE_CHECKING:
    from .context import RequestContext
    from .session import ServerSession
    from .subscriptions import Subscription

ListKind = Literal["tools", "resources", "prompts"]
Listener = Callable[[str, str | None], None]


class UnknownTool(McpError):
    def __init__(self, name: str) -> None:
        super().__init__(INVALID_PARAMS, f"Unknown tool: {name}")
        self.name = name


class UnknownPrompt(McpError):
    def __init__(self, name: str) -> None:
        super().__init__(INVALID_PARAMS, f"Unknown prompt: {name}")
        self.name = name


class ResourceNotFound(McpError):
    """Nothing at `uri`: raise it from a resource reader (public as
    `codex_mcp.ResourceNotFound`) to answer the protocol's resource-not-found error."""

    # -32602 with the uri in data, as the conformance suite and the 2025-11-25 spec expect
    # (earlier drafts used -32002).
    def __init__(self, uri: str) -> None:
        super().__init__(INVALID_PARAMS, f"Resource not found: {uri}", {"uri": uri})
        self.uri = uri


class Provider:
    """Base provider: serves nothing. Override what you serve and list it in `features`."""

    @property
    def features(self) -> frozenset[str]:
        """Which of "tools", "resources", "prompts", "completions" this provider serves;
        "skills" (the Skills extension: skills/list, skills/get) and "directories"
        (resources/directory/read) too."""
        return frozenset()

    def __init__(self) -> None:
        self._listeners: list[Listener] = []

    # -- change notification -------------------------------------------------
    def add_listener(self, listener: Listener) -> None:
        self._listeners.append(listener)

    def notify_list_changed(self, kind: ListKind) -> None:
        for listener in list(self._listeners):
            listener(kind, None)

    def notify_resource_updated(self, uri: str) -> None:
        for listener in list(self._listeners):
            listener("resource_updated", uri)

    # -- lifetime --------------------------------------------------------------
    async def start(self) -> None:
        """Start what every session shares (the server's lifespan begins)."""

    async def stop(self) -> None:
        """Stop what `start` started and release what the provider holds."""

    async def aclose(self) -> None:
        """`stop()` (the name earlier versions used)."""
        await self.stop()

    def open_session(self, session: ServerSession) -> None:
        """A session opened. Must not block: start per-session work lazily or with
        `session.start_soon`, and push its teardown on `session.cleanup`."""

    async def close_session(self, session: ServerSession) -> None:
        """A session ended (closed, deleted or expired), before its cleanup stack unwinds."""

    def closes_sessions(self) -> bool:
        """Whether `close_session` has work to do: a session ending with none, and nothing
        on its cleanup stack, is torn down on the spot (no task; every session of a
        session-per-call client ends)."""
        return type(self).close_session is not Provider.close_session

    # -- tools -----------------------------------------------------------------
    async def list_tools(self, ctx: RequestContext) -> Sequence[JsonObject]:
        return ()

    def call_tool(
        self, name: str, arguments: JsonObject, ctx: RequestContext
    ) -> Awaitable[JsonObject]:
        """The call's awaitable result. May be an `async def`; a plain method that raises
        UnknownTool at once, before any awaitable exists, is fine too, and so is
        returning `Ready(result)` when the answer needs no waiting."""
        raise UnknownTool(name)

    # -- resources -------------------------------------------------------------
    async def list_resources(self, ctx: RequestContext) -> Sequence[JsonObject]:
        return ()

    async def list_resource_templates(self, ctx: RequestContext) -> Sequence[JsonObject]:
        return ()

    async def read_resource(self, uri: str, ctx: RequestContext) -> list[JsonObject]:
        """The `contents` list of a resources/read result."""
        raise ResourceNotFound(uri)

    async def subscribe(self, uri: str, ctx: RequestContext) -> bool | None:
        """The session subscribed to `uri` (the core records it; a relay passes it on).
        False: keep nothing (answered as any subscribe is; no update reaches the session:
        the policy's answer for a hidden URI)."""
        return None

    async def unsubscribe(self, uri: str, ctx: RequestContext) -> None:
        """The session unsubscribed from `uri`."""

    async def listen_started(self, subscription: Subscription, ctx: RequestContext) -> None:
        """A 2026-07-28 `subscriptions/listen` opens (before its acknowledgement): the core
        feeds it this provider's events; a relay passes its resource URIs on. An McpError
        refuses the listen."""

    def listen_ended(self, subscription: Subscription) -> None:
        """That listen ended (stream closed, cancelled, server shutting down). Must not
        block: it runs as the request unwinds, cancelled or not."""

    # -- skills (the Skills extension; core/skills.py) ---------------------------
    async def list_skills(self, ctx: RequestContext) -> Sequence[JsonObject]:
        """Skill entries ({uri, frontmatter, resources}) of skills/list."""
        return ()

    async def get_skill(self, uri: str, ctx: RequestContext) -> JsonObject:
        """The entry of the skill whose SKILL.md is at `uri`; UnknownSkill if none."""
        raise UnknownSkill(uri)

    async def read_directory(self, uri: str, ctx: RequestContext) -> Sequence[JsonObject]:
        """The Resource entries of a directory resource's direct children; NotADirectory
        when `uri` is none."""
        raise NotADirectory(uri)

    # -- prompts ---------------------------------------------------------------
    async def list_prompts(self, ctx: RequestContext) -> Sequence[JsonObject]:
        return ()

    async def get_prompt(
        self, name: str, arguments: dict[str, str], ctx: RequestContext
    ) -> JsonObject:
        raise UnknownPrompt(name)

    # -- completion ------------------------------------------------------------
    async def complete(
        self,
        ref: JsonObject,
        argument: JsonObject,
        context_arguments: dict[str, str],
        ctx: RequestContext,
    ) -> JsonObject | None:
        """A `completion` object ({"values": [...], ...}), or None when this provider has none."""
        return None

    # -- the session's settings -------------------------------------------------
    async def set_log_level(self, level: str, ctx: RequestContext) -> None:
        """The session asked for log messages at `level` and above (logging/setLevel)."""

    def roots_changed(self, session: ServerSession) -> None:
        """The session's client said its roots changed (ask again with roots/list)."""


def require_str(params: JsonObject, key: str) -> str:
    value = params.get(key)
    if not isinstance(value, str):
        raise invalid_params(f"'{key}' must be a string")
    return value


__all__ = [
    "ListKind",
    "Listener",
    "Provider",
    "ResourceNotFound",
    "UnknownPrompt",
    "UnknownTool",
    "require_str",
]
