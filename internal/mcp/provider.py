"""Where tools, resources and prompts come from.

The core asks providers, never a registry of its own, so local functions, a
remote server behind the gateway, or anything else can serve through one core.
Every listing is async and may change at run time; a provider says so through
`notify_list_changed`, and the core tells every live session.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import TYPE_CHECKING, Any, Literal

from .jsonrpc import INVALID_PARAMS, JsonObject, JsonRpcError, invalid_params

if TYPE_CHECKING:
    from .context import RequestContext

ListKind = Literal["tools", "resources", "prompts"]
Listener = Callable[[str, str | None], None]


class UnknownTool(JsonRpcError):
    def __init__(self, name: str) -> None:
        super().__init__(-32602, f"Unknown tool: {name}")
        self.name = name


class UnknownPrompt(JsonRpcError):
    def __init__(self, name: str) -> None:
        super().__init__(-32602, f"Unknown prompt: {name}")


class ResourceNotFound(JsonRpcError):
    # -32602 with the uri in data, as the conformance suite and the 2025-11-25 spec expect
    # (earlier drafts used -32002).
    def __init__(self, uri: str) -> None:
        super().__init__(INVALID_PARAMS, f"Resource not found: {uri}", {"uri": uri})


class Provider:
    """Base provider: serves nothing. Override what you serve and list it in `features`."""

    @property
    def features(self) -> frozenset[str]:
        """Which of "tools", "resources", "prompts", "completions" this provider serves."""
        return frozenset()

    def __init__(self) -> None:
        self._listeners: list[Listener] = []

    # -- change notification -------------------------------------------------
    def add_listener(self, listener: Listener) -> None:
        self._listeners.append(listener)

    def remove_listener(self, listener: Listener) -> None:
        if listener in self._listeners:
            self._listeners.remove(listener)

    def notify_list_changed(self, kind: ListKind) -> None:
        for listener in list(self._listeners):
            listener(kind, None)

    def notify_resource_updated(self, uri: str) -> None:
        for listener in list(self._listeners):
            listener("resource_updated", uri)

    # -- tools -----------------------------------------------------------------
    async def list_tools(self) -> Sequence[JsonObject]:
        return ()

    def call_tool(
        self, name: str, arguments: JsonObject, ctx: RequestContext
    ) -> Awaitable[JsonObject]:
        """The call's awaitable result. May be an `async def`; a plain method that raises
        UnknownTool at once, before any awaitable exists, is fine too."""
        raise UnknownTool(name)

    # -- resources -------------------------------------------------------------
    async def list_resources(self) -> Sequence[JsonObject]:
        return ()

    async def list_resource_templates(self) -> Sequence[JsonObject]:
        return ()

    async def read_resource(self, uri: str, ctx: RequestContext) -> list[JsonObject]:
        """The `contents` list of a resources/read result."""
        raise ResourceNotFound(uri)

    # -- prompts ---------------------------------------------------------------
    async def list_prompts(self) -> Sequence[JsonObject]:
        return ()

    async def get_prompt(
        self, name: str, arguments: dict[str, str], ctx: RequestContext
    ) -> JsonObject:
        raise UnknownPrompt(name)

    # -- completion ------------------------------------------------------------
    async def complete(
        self, ref: JsonObject, argument: JsonObject, context_arguments: dict[str, str]
    ) -> JsonObject | None:
        """A `completion` object ({"values": [...], ...}), or None when this provider has none."""
        return None

    async def aclose(self) -> None:
        """Release what the provider holds (child processes, connections)."""


class CompositeProvider(Provider):
    """Several providers as one: listings are concatenated, the first provider that knows a name wins."""

    def __init__(self, providers: Sequence[Provider]) -> None:
        super().__init__()
        self.providers = list(providers)
        for provider in self.providers:
            provider.add_listener(self._relay)

    @property
    def features(self) -> frozenset[str]:
        out: frozenset[str] = frozenset()
        for provider in self.providers:
            out |= provider.features
        return out

    def _relay(self, kind: str, uri: str | None) -> None:
        for listener in list(self._listeners):
            listener(kind, uri)

    async def list_tools(self) -> Sequence[JsonObject]:
        return _first_wins([await p.list_tools() for p in self.providers], "name")

    def call_tool(
        self, name: str, arguments: JsonObject, ctx: RequestContext
    ) -> Awaitable[JsonObject]:
        if len(self.providers) == 1:
            return self.providers[0].call_tool(name, arguments, ctx)
        return self._call_first(name, arguments, ctx)

    async def _call_first(
        self, name: str, arguments: JsonObject, ctx: RequestContext
    ) -> JsonObject:
        for provider in self.providers:
            try:
                return await provider.call_tool(name, arguments, ctx)
            except UnknownTool:
                continue
        raise UnknownTool(name)

    async def list_resources(self) -> Sequence[JsonObject]:
        return _first_wins([await p.list_resources() for p in self.providers], "uri")

    async def list_resource_templates(self) -> Sequence[JsonObject]:
        return _first_wins(
            [await p.list_resource_templates() for p in self.providers], "uriTemplate"
        )

    async def read_resource(self, uri: str, ctx: RequestContext) -> list[JsonObject]:
        for provider in self.providers:
            try:
                return await provider.read_resource(uri, ctx)
            except ResourceNotFound:
                continue
        raise ResourceNotFound(uri)

    async def list_prompts(self) -> Sequence[JsonObject]:
        return _first_wins([await p.list_prompts() for p in self.providers], "name")

    async def get_prompt(
        self, name: str, arguments: dict[str, str], ctx: RequestContext
    ) -> JsonObject:
        for provider in self.providers:
            try:
                return await provider.get_prompt(name, arguments, ctx)
            except UnknownPrompt:
                continue
        raise UnknownPrompt(name)

    async def complete(
        self, ref: JsonObject, argument: JsonObject, context_arguments: dict[str, str]
    ) -> JsonObject | None:
        for provider in self.providers:
            completion = await provider.complete(ref, argument, context_arguments)
            if completion is not None:
                return completion
        return None

    async def aclose(self) -> None:
        for provider in self.providers:
            await provider.aclose()


def _first_wins(listings: list[Sequence[JsonObject]], key: str) -> list[JsonObject]:
    if len(listings) == 1:
        return list(listings[0])
    seen: set[Any] = set()
    merged: list[JsonObject] = []
    for listing in listings:
        for item in listing:
            if item.get(key) not in seen:
                seen.add(item.get(key))
                merged.append(item)
    return merged


def require_str(params: JsonObject, key: str) -> str:
    value = params.get(key)
    if not isinstance(value, str):
        raise invalid_params(f"'{key}' must be a string")
    return value
