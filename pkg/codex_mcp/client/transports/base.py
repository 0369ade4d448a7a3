"""The contract between a ClientSession and a transport (specs/client.md, "Transports")."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable

from codex_mcp.core.jsonrpc import JsonObject

#: on_message(message, related_request_id=None)
OnMessage = Callable[..., object]
OnClosed = Callable[[BaseException | None], None]


class Transport(ABC):
    @abstractmethod
    async def start(self, on_message: OnMessage, on_closed: OnClosed) -> None:
        """Connect. Messages received from now on go to `on_message`."""

    @abstractmethod
    async def send(self, message: JsonObject) -> None:
        """Deliver one message. For request/response transports (Streamable HTTP) this also
        reads the answer and hands it to `on_message` before returning. Raises TransportError."""

    @abstractmethod
    async def close(self) -> None:
        """Disconnect and release everything; idempotent."""

    def initialized(self, protocol_version: str) -> None:
        """The handshake finished with `protocol_version` (HTTP sends it as a header from now on)."""
        return None

    def use_stateless(self, version: str | None) -> None:
        """Speak 2026-07-28 `version` from now on (None: back to the legacy handshake).
        Over HTTP that means no session and the routing headers; stdio needs nothing."""
        return None

    @property
    def cancels_by_notification(self) -> bool:
        """Whether an abandoned request is cancelled with notifications/cancelled (stdio);
        a stateless HTTP exchange is cancelled by closing its stream instead."""
        return True

    def reset_session(self) -> None:
        """Forget the server-side session before a re-initialize (HTTP only)."""
        return None

    @property
    def session_id(self) -> str | None:
        return None

    def describe(self) -> str:
        return type(self).__name__
