"""A Provider serving `codex` and `codex-reply` from one app-server per server process.

The first call starts `codex app-server` (and a call after it died starts a new one; the
dead one's threads are gone with it). This is the stdio shape: one process, one MCP
session. Per-session app-servers over HTTP hang a driver on each session instead.

`codex-mcp --serve codex_mcp.codex.provider` serves it (through `build_server`).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from codex_mcp import __version__
from codex_mcp.core.jsonrpc import JsonObject
from codex_mcp.core.provider import Provider, UnknownTool
from codex_mcp.core.server import ServerCore

from .calls import call_tool
from .driver import CodexDriver
from .errors import CodexError
from .tools import CODEX, CODEX_REPLY, TOOLS, error_result

if TYPE_CHECKING:
    from codex_mcp.core.context import RequestContext


class CodexProvider(Provider):
    def __init__(
        self, *, env: Mapping[str, str] | None = None, driver_options: JsonObject | None = None
    ) -> None:
        super().__init__()
        #: Laid over our environment for app-server (CODEX_BIN, CODEX_HOME, ...).
        self.env = dict(env or {})
        self.driver_options: dict[str, Any] = dict(driver_options or {})
        self._driver: CodexDriver | None = None
        self._starting = asyncio.Lock()

    @property
    def features(self) -> frozenset[str]:
        return frozenset({"tools"})

    async def list_tools(self, ctx: RequestContext) -> Sequence[JsonObject]:
        return TOOLS

    def call_tool(
        self, name: str, arguments: JsonObject, ctx: RequestContext
    ) -> Awaitable[JsonObject]:
        if name not in (CODEX, CODEX_REPLY):
            raise UnknownTool(name)
        return self._call(name, arguments, ctx)

    async def _call(self, name: str, arguments: JsonObject, ctx: RequestContext) -> JsonObject:
        try:
            driver = await self.driver()
        except CodexError as exc:
            return error_result(exc)
        return await call_tool(driver, name, arguments, ctx)

    async def driver(self) -> CodexDriver:
        """The live driver, started on first use; raises CodexUnavailable without a Codex."""
        async with self._starting:
            if self._driver is None or self._driver.gone is not None:
                self._driver = await CodexDriver.spawn(env=self.env, **self.driver_options)
            return self._driver

    async def stop(self) -> None:
        if self._driver is not None:
            await self._driver.close()


def build_server(env: Mapping[str, str] | None = None) -> ServerCore:
    return ServerCore(
        CodexProvider(env=env), name="codex-mcp-server", title="Codex", version=__version__
    )
