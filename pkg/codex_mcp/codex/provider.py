"""A Provider serving `codex` and `codex-reply`, with one app-server per MCP session
(specs/codex-tools.md, "Sessions")."""

from __future__ import annotations

import asyncio
import logging
import os
from collections.abc import Awaitable, Hashable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Final

from codex_mcp import __version__
from codex_mcp.core.jsonrpc import JsonObject
from codex_mcp.core.provider import Provider, UnknownTool
from codex_mcp.core.server import ServerCore
from codex_mcp.core.session import StatelessSession

from ..observe.hooks import CodexTurnHooks
from ..session_logs import SESSION, session_label
from ..settings import HttpDefaults
from . import nesting
from .binary import find_codex
from .bounds import CodexBounds
from .calls import read_call, run_call
from .driver import CodexDriver
from .errors import CodexError
from .session_codex import AppServerLimit, SessionCodex
from .tools import CODEX, CODEX_REPLY, TOOLS, error_result

if TYPE_CHECKING:
    from codex_mcp.core.context import RequestContext
    from codex_mcp.core.session import ServerSession

log = logging.getLogger("codex_mcp.codex")

#: The one declaration is the HTTP setting's (`--codex-max-app-servers`).
DEFAULT_MAX_APP_SERVERS: Final = HttpDefaults.codex_max_app_servers


class CodexProvider(Provider, CodexTurnHooks):
    def __init__(
        self,
        *,
        env: Mapping[str, str] | None = None,
        driver_options: JsonObject | None = None,
        max_app_servers: int = DEFAULT_MAX_APP_SERVERS,
        bounds: CodexBounds | None = None,
    ) -> None:
        super().__init__()
        #: The most a call may ask for (none: as the caller asks, the single-user default).
        self.bounds = bounds or CodexBounds()
        #: Laid over our environment for app-server (CODEX_BIN, CODEX_HOME, ...).
        self.env = dict(env or {})
        self.driver_options: dict[str, Any] = dict(driver_options or {})
        self.limit = AppServerLimit(max_app_servers)
        self._check: asyncio.Task[None] | None = None
        #: How deep inside bridges' Codexes this one runs; too deep, every call is refused.
        self.depth = nesting.depth()
        self.refused = nesting.refusal(self.depth)

    @property
    def features(self) -> frozenset[str]:
        return frozenset({"tools"})

    @property
    def running(self) -> int:
        """App-servers running now, across sessions."""
        return self.limit.live

    # -- lifetime ------------------------------------------------------------------
    async def start(self) -> None:
        if self.refused is not None:
            log.warning("%s", self.refused.message)
            return
        # Say at once whether there is a Codex to serve (the answer is cached for the
        # first session), without holding up the server.
        self._check = asyncio.get_running_loop().create_task(self._report_codex())

    async def stop(self) -> None:
        if self._check is not None:
            self._check.cancel()

    async def _report_codex(self) -> None:
        try:
            binary = await find_codex({**os.environ, **self.env})
        except CodexError as exc:
            log.warning("%s", exc.message)
        else:
            log.info(
                "serving Codex CLI %s (%s, from %s); at most %d app-servers at once",
                binary.version_text, binary.path, binary.source, self.limit.maximum,
            )  # fmt: skip

    def session_codex(self, session: ServerSession) -> SessionCodex:
        """The Codex of a session (of a caller, for 2026-07-28 requests); stopped with it."""
        key: Hashable = self
        if isinstance(session, StatelessSession):
            key = (self, session.principal)  # the server-wide scope, split by caller
        codex: SessionCodex | None = session.state.get(key)
        if codex is None:
            codex = SessionCodex(self._spawn, self.limit, _label(session))
            session.state[key] = codex
            session.cleanup.push_async_callback(codex.close)
        return codex

    async def _spawn(self) -> CodexDriver:
        env = {**self.env, nesting.DEPTH_ENV: str(self.depth + 1)}
        return await CodexDriver.spawn(env=env, **self.driver_options)

    # -- tools -----------------------------------------------------------------------
    async def list_tools(self, ctx: RequestContext) -> Sequence[JsonObject]:
        return TOOLS

    def call_tool(
        self, name: str, arguments: JsonObject, ctx: RequestContext
    ) -> Awaitable[JsonObject]:
        if name not in (CODEX, CODEX_REPLY):
            raise UnknownTool(name)
        return self._call(name, arguments, ctx)

    async def _call(self, name: str, arguments: JsonObject, ctx: RequestContext) -> JsonObject:
        # Checked before the session's app-server is started or asked: a call past the
        # bounds costs no process and reaches no Codex.
        if self.refused is not None:
            return error_result(self.refused)
        try:
            call = read_call(name, arguments, self.bounds, ctx.caller_scopes)
        except CodexError as exc:
            return error_result(exc)
        session = ctx.session
        # Every line logged for this call, and by the app-server it may start, names the
        # session (this task's context is the call's own).
        codex = self.session_codex(session)
        SESSION.set(codex.label)
        try:
            driver = await codex.driver()
        except CodexError as exc:
            return error_result(exc)
        if self.turn_observer is None:
            return await run_call(driver, call, ctx)
        return await self.turn_observer.on_codex_turn(
            call.tool, lambda: run_call(driver, call, ctx)
        )


def _label(session: ServerSession) -> str | None:
    if isinstance(session, StatelessSession):
        return "2026-07-28" + (f" caller {session.principal[:12]}" if session.principal else "")
    return session_label(session.session_id) if session.session_id else None


def build_server(
    env: Mapping[str, str] | None = None,
    *,
    max_app_servers: int = DEFAULT_MAX_APP_SERVERS,
    bounds: CodexBounds | None = None,
) -> ServerCore:
    return ServerCore(
        CodexProvider(env=env, max_app_servers=max_app_servers, bounds=bounds),
        name="codex-mcp-server",
        title="Codex",
        version=__version__,
    )
