"""Namespaced: any provider's tools, prompts and resources under a prefix.

Tools and prompts become `<namespace><separator><name>` (`time__get_current_time`).
Resource URIs get the namespace as their first segment after the scheme, as FastMCP
does (`file:///tmp/a` -> `file://time//tmp/a`, `docs://{path}` -> `docs://time/{path}`),
so two providers' resources never collide and a URI maps back to its owner. Only the
names the client sees change; the inner provider gets its own names back, and its "not
found" (UnknownTool, UnknownPrompt, ResourceNotFound) goes out in the client's name.
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Sequence
from typing import TYPE_CHECKING

from .jsonrpc import JsonObject
from .provider import Provider, ResourceNotFound, UnknownPrompt, UnknownTool

if TYPE_CHECKING:
    from .context import RequestContext
    from .session import ServerSession

_SCHEME_END = "://"


class Namespaced(Provider):
    def __init__(self, inner: Provider, namespace: str, separator: str = "__") -> None:
        super().__init__()
        self.inner = inner
        self.namespace = namespace
        self.name = namespace
        self._prefix = namespace + separator
        inner.add_listener(self._relay)

    @property
    def features(self) -> frozenset[str]:
        return self.inner.features

    def _relay(self, kind: str, uri: str | None) -> None:
        outer = self.outer_uri(uri) if uri is not None else None
        for listener in list(self._listeners):
            listener(kind, outer)

    # -- names -----------------------------------------------------------------
    def outer_name(self, name: str) -> str:
        return self._prefix + name

    def inner_name(self, name: str) -> str | None:
        return name[len(self._prefix) :] if name.startswith(self._prefix) else None

    def outer_uri(self, uri: str) -> str:
        scheme, found, rest = uri.partition(_SCHEME_END)
        if not found:
            return f"{self.namespace}:{uri}"
        return f"{scheme}{_SCHEME_END}{self.namespace}/{rest}"

    def inner_uri(self, uri: str) -> str | None:
        scheme, found, rest = uri.partition(_SCHEME_END)
        if not found:
            head = f"{self.namespace}:"
            return uri[len(head) :] if uri.startswith(head) else None
        head = f"{self.namespace}/"
        return f"{scheme}{_SCHEME_END}{rest[len(head) :]}" if rest.startswith(head) else None

    # -- lifetime --------------------------------------------------------------
    async def start(self) -> None:
        await self.inner.start()

    async def stop(self) -> None:
        await self.inner.stop()

    def open_session(self, session: ServerSession) -> None:
        self.inner.open_session(session)

    async def close_session(self, session: ServerSession) -> None:
        await self.inner.close_session(session)

    def closes_sessions(self) -> bool:
        return self.inner.closes_sessions()

    def roots_changed(self, session: ServerSession) -> None:
        self.inner.roots_changed(session)

    async def set_log_level(self, level: str, ctx: RequestContext) -> None:
        await self.inner.set_log_level(level, ctx)

    # -- tools and prompts -----------------------------------------------------
    async def list_tools(self, ctx: RequestContext) -> Sequence[JsonObject]:
        return [
            {**tool, "name": self.outer_name(tool["name"])}
            for tool in await self.inner.list_tools(ctx)
        ]

    def call_tool(
        self, name: str, arguments: JsonObject, ctx: RequestContext
    ) -> Awaitable[JsonObject]:
        inner = self.inner_name(name)
        if inner is None:
            raise UnknownTool(name)
        # "Unknown tool" is said in our name: the client never saw the inner provider's.
        try:
            work = self.inner.call_tool(inner, arguments, ctx)
        except UnknownTool:
            raise UnknownTool(name) from None
        if inspect.iscoroutine(work):  # an `async def` may raise it when awaited
            return _unknown_tool_as(name, work)
        return work

    async def list_prompts(self, ctx: RequestContext) -> Sequence[JsonObject]:
        return [
            {**prompt, "name": self.outer_name(prompt["name"])}
            for prompt in await self.inner.list_prompts(ctx)
        ]

    async def get_prompt(
        self, name: str, arguments: dict[str, str], ctx: RequestContext
    ) -> JsonObject:
        inner = self.inner_name(name)
        if inner is None:
            raise UnknownPrompt(name)
        try:
            return await self.inner.get_prompt(inner, arguments, ctx)
        except UnknownPrompt:
            raise UnknownPrompt(name) from None

    # -- resources -------------------------------------------------------------
    async def list_resources(self, ctx: RequestContext) -> Sequence[JsonObject]:
        return [
            {**resource, "uri": self.outer_uri(resource["uri"])}
            for resource in await self.inner.list_resources(ctx)
        ]

    async def list_resource_templates(self, ctx: RequestContext) -> Sequence[JsonObject]:
        return [
            {**template, "uriTemplate": self.outer_uri(template["uriTemplate"])}
            for template in await self.inner.list_resource_templates(ctx)
        ]

    async def read_resource(self, uri: str, ctx: RequestContext) -> list[JsonObject]:
        inner = self.inner_uri(uri)
        if inner is None:
            raise ResourceNotFound(uri)
        try:
            contents = await self.inner.read_resource(inner, ctx)
        except ResourceNotFound:
            raise ResourceNotFound(uri) from None
        return [
            {**item, "uri": self.outer_uri(item["uri"])}
            if isinstance(item.get("uri"), str)
            else item
            for item in contents
        ]

    async def subscribe(self, uri: str, ctx: RequestContext) -> None:
        inner = self.inner_uri(uri)
        if inner is not None:
            await self.inner.subscribe(inner, ctx)

    async def unsubscribe(self, uri: str, ctx: RequestContext) -> None:
        inner = self.inner_uri(uri)
        if inner is not None:
            await self.inner.unsubscribe(inner, ctx)

    # -- completion ------------------------------------------------------------
    async def complete(
        self,
        ref: JsonObject,
        argument: JsonObject,
        context_arguments: dict[str, str],
        ctx: RequestContext,
    ) -> JsonObject | None:
        if ref.get("type") == "ref/prompt":
            inner = self.inner_name(str(ref.get("name")))
            key = "name"
        else:
            inner = self.inner_uri(str(ref.get("uri")))
            key = "uri"
        if inner is None:
            return None
        return await self.inner.complete({**ref, key: inner}, argument, context_arguments, ctx)


async def _unknown_tool_as(name: str, work: Awaitable[JsonObject]) -> JsonObject:
    try:
        return await work
    except UnknownTool:
        raise UnknownTool(name) from None


__all__ = ["Namespaced"]
