"""A lower-level handler interface for people who route by hand (like the Rust codex-mcp
crate's `McpHandler`): override `tools_list` and `tools_call` (and optionally `initialize`)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..core.context import RequestContext
from ..core.extensions import Extension
from ..core.jsonrpc import JsonObject
from ..core.provider import Provider
from ..core.server import ServerCore
from ..core.session import ServerSession
from .content import to_blocks


class McpHandler:
    name = "codex-mcp"
    version = "0.1.0"

    def initialize(self, params: JsonObject, default: JsonObject) -> JsonObject:
        """Return the initialize result; `default` is what the core would answer."""
        return default

    async def tools_list(self) -> Sequence[JsonObject]:
        """Tool definitions: {"name", "description", "inputSchema", ...}."""
        return []

    async def tools_call(self, name: str, arguments: JsonObject, ctx: RequestContext) -> Any:
        """A CallToolResult dict, or str/content to be wrapped. Unknown names: return
        `{"content": [...], "isError": True}` or raise codex_mcp.core.UnknownTool."""
        raise NotImplementedError


class HandlerProvider(Provider):
    @property
    def features(self) -> frozenset[str]:
        return frozenset({"tools"})

    def __init__(self, handler: McpHandler) -> None:
        super().__init__()
        self.handler = handler

    async def list_tools(self, ctx: RequestContext) -> Sequence[JsonObject]:
        return await self.handler.tools_list()

    async def call_tool(self, name: str, arguments: JsonObject, ctx: RequestContext) -> JsonObject:
        result = await self.handler.tools_call(name, arguments, ctx)
        if isinstance(result, dict) and "content" in result:
            return result
        return {"content": to_blocks(result)}


class HandlerInitialize(Extension):
    """The handler's `initialize` override, given what the core would answer."""

    def __init__(self, handler: McpHandler) -> None:
        self.handler = handler

    def initialize(
        self, session: ServerSession, params: JsonObject, result: JsonObject
    ) -> JsonObject:
        return self.handler.initialize(params, result)


def handler_core(handler: McpHandler) -> ServerCore:
    """A ServerCore that routes to `handler`, including its initialize override."""
    core = ServerCore(HandlerProvider(handler), name=handler.name, version=handler.version)
    core.extend(HandlerInitialize(handler))
    return core


def serve_handler(handler: McpHandler, **options: Any) -> None:
    """Serve a handler over stdio."""
    from ..transports.stdio import run_stdio

    run_stdio(handler_core(handler), **options)
