"""A JSON-RPC connection to one `codex app-server` process over its stdio.

The driver talks to app-server only through `AppServerConnection`, a deliberately narrow seam,
so moving it onto another JSON-RPC peer means another class with its six members, not touching
the protocol logic (specs/codex-tools.md, "app-server, as the driver uses it")."""

from __future__ import annotations

import contextlib
import logging
import os
import signal
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Protocol

from codex_mcp.client.errors import ConnectionClosed, McpClientError, RequestTimeout, SpawnError
from codex_mcp.client.session import ClientSession
from codex_mcp.client.transports.base import OnClosed, OnMessage, Transport
from codex_mcp.client.transports.stdio import StdioTransport
from codex_mcp.core.errors import McpError
from codex_mcp.core.jsonrpc import JsonObject

from .errors import AppServerGone, CodexUnavailable

log = logging.getLogger("codex_mcp.codex")

NotificationCallback = Callable[[str, JsonObject], None]
RequestHandler = Callable[[JsonObject], Awaitable[JsonObject]]
CloseCallback = Callable[[str], None]


class AppServerConnection(Protocol):
    async def request(
        self, method: str, params: JsonObject | None = None, timeout: float | None = None
    ) -> JsonObject:
        """The result; raises McpError, AppServerGone or TimeoutError."""
        ...

    async def notify(self, method: str, params: JsonObject | None = None) -> None: ...

    def on_notification(self, callback: NotificationCallback) -> None:
        """Every notification from the peer, in order, called synchronously."""
        ...

    def handle_requests(self, method: str, handler: RequestHandler) -> None:
        """Answer the peer's requests for `method` with what `handler` returns. Requests for
        methods nobody handles are answered with -32601, so none is left unanswered."""
        ...

    def on_close(self, callback: CloseCallback) -> None:
        """Called once, with a reason, when the connection is gone for good."""
        ...

    async def close(self) -> None: ...


class _WatchedTransport(Transport):
    """Passes everything through and also reports the end of the connection to us: when the
    transport has seen the process go (the session's `on_closed` fires as closing begins)."""

    def __init__(self, inner: Transport, on_gone: Callable[[BaseException | None], None]) -> None:
        self.inner = inner
        self._on_gone = on_gone

    async def start(self, on_message: OnMessage, on_closed: OnClosed) -> None:
        def closed(exc: BaseException | None) -> None:
            on_closed(exc)
            self._on_gone(exc)

        await self.inner.start(on_message, closed)

    async def send(self, message: JsonObject) -> None:
        await self.inner.send(message)

    async def close(self) -> None:
        await self.inner.close()

    def describe(self) -> str:
        return self.inner.describe()


class StdioConnection:
    """`AppServerConnection` over a child process's stdin/stdout."""

    def __init__(
        self,
        command: Sequence[str],
        *,
        env: Mapping[str, str] | None = None,
        cwd: str | os.PathLike[str] | None = None,
        shutdown_timeout: float = 2.0,
    ) -> None:
        self.transport = StdioTransport(
            command, env=env, cwd=cwd, shutdown_timeout=shutdown_timeout
        )
        self.session = ClientSession(_WatchedTransport(self.transport, self._gone))
        self._close_callbacks: list[CloseCallback] = []
        self._reason: str | None = None

    @property
    def pid(self) -> int | None:
        process = self.transport.process
        return process.pid if process is not None else None

    async def start(self) -> None:
        try:
            await self.session.start()
        except SpawnError as exc:
            raise CodexUnavailable(str(exc).replace("MCP server", "codex app-server")) from None

    async def request(
        self, method: str, params: JsonObject | None = None, timeout: float | None = None
    ) -> JsonObject:
        try:
            return await self.session.request(method, params, timeout=timeout)
        except McpError:
            raise  # app-server answered with an error: the caller's to judge
        except RequestTimeout as exc:
            raise TimeoutError(str(exc)) from None
        except McpClientError as exc:  # ConnectionClosed, TransportError
            raise AppServerGone(self._reason or str(exc)) from None

    async def notify(self, method: str, params: JsonObject | None = None) -> None:
        try:
            await self.session.notify_async(method, params)
        except McpClientError as exc:
            raise AppServerGone(self._reason or str(exc)) from None

    def on_notification(self, callback: NotificationCallback) -> None:
        self.session.notification_handlers.append(callback)

    def handle_requests(self, method: str, handler: RequestHandler) -> None:
        self.session.request_handlers[method] = handler

    def on_close(self, callback: CloseCallback) -> None:
        if self._reason is not None:
            callback(self._reason)
        else:
            self._close_callbacks.append(callback)

    async def close(self) -> None:
        """Close stdin (app-server exits on EOF), then signals; finally kill what is left of
        its process group: the npm `codex` may be a Node wrapper whose native child would
        otherwise outlive a killed wrapper."""
        pid = self.pid
        await self.session.aclose()
        if pid is not None:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(pid, signal.SIGKILL)

    def _gone(self, exc: BaseException | None) -> None:
        if self._reason is not None:
            return
        if isinstance(exc, ConnectionClosed) and "client closed" in str(exc):
            self._reason = "the Codex app-server connection was closed"
        else:
            detail = str(exc).replace("MCP server", "process") if exc else "its pipes closed"
            self._reason = f"the Codex app-server stopped: {detail}"
        log.info("%s", self._reason)
        for callback in self._close_callbacks:
            try:
                callback(self._reason)
            except Exception:
                log.exception("close callback %r failed", callback)
        self._close_callbacks.clear()
