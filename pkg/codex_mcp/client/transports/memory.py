"""In-memory transport: a client wired straight to a server's core, for tests
(specs/client.md, "Transports")."""

from __future__ import annotations

import asyncio
from collections.abc import Hashable
from typing import Any

from codex_mcp.core import ServerCore, ServerSession, jsonrpc
from codex_mcp.core.jsonrpc import JsonObject

from ..errors import ConnectionClosed
from .base import OnClosed, OnMessage, Transport


class _Outbound:
    """The server session's outbound: hands each message to the client on the next loop turn."""

    def __init__(self, loop: asyncio.AbstractEventLoop, on_message: OnMessage) -> None:
        self._loop = loop
        self._on_message = on_message

    def send(
        self, message: JsonObject | list[JsonObject], related_request_id: Hashable = None
    ) -> None:
        # call_soon: never re-enter the client from inside the server's receive().
        self._loop.call_soon(
            self._on_message, jsonrpc.decode(jsonrpc.encode(message)), related_request_id
        )


class MemoryTransport(Transport):
    def __init__(self, server: Any) -> None:
        """`server`: a codex_mcp server (anything with a `.core`) or a ServerCore."""
        core = getattr(server, "core", server)
        if not isinstance(core, ServerCore):
            raise TypeError(
                f"expected a codex-mcp server or ServerCore, got {type(server).__name__}"
            )
        self.core = core
        self._session: ServerSession | None = None
        self._on_closed: OnClosed | None = None

    async def start(self, on_message: OnMessage, on_closed: OnClosed) -> None:
        self._on_closed = on_closed
        self._session = self.core.open_session(_Outbound(asyncio.get_running_loop(), on_message))

    async def send(self, message: JsonObject) -> None:
        if self._session is None or self._session.closed:
            raise ConnectionClosed("in-memory session closed")
        self._session.receive(jsonrpc.decode(jsonrpc.encode(message)))

    async def close(self) -> None:
        session, self._session = self._session, None
        if session is not None:
            session.close()
            if self._on_closed is not None:
                self._on_closed(ConnectionClosed("in-memory session closed"))

    def describe(self) -> str:
        return f"in-memory server {self.core.server_info.get('name')!r}"
