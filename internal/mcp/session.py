"""ServerSession: one client connection to an MCP server, on the JSON-RPC peer (specs/design.md,
"Sessions and the server")."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable, Hashable, Mapping
from typing import TYPE_CHECKING, Any

from .context import RequestContext
from .errors import McpError
from .jsonrpc import INTERNAL_ERROR, INVALID_REQUEST, JsonObject, RequestId
from .list_changed import ListChangedAnnouncer
from .log_levels import LOG_LEVEL_RANK
from .log_names import session_extra
from .peer import CallOptions, JsonRpcPeer, Outbound
from .stateless_context import StatelessContext
from .versions import allows_batches

if TYPE_CHECKING:
    from .server import ServerCore

log = logging.getLogger("codex_mcp.session")

# Server-to-client methods and the client capability each needs.
CLIENT_CAPABILITY_FOR = {
    "sampling/createMessage": "sampling",
    "elicitation/create": "elicitation",
    "roots/list": "roots",
}


class ClientError(McpError):
    """The client answered one of our requests with an error, or could not be asked."""


class ServerSession(JsonRpcPeer):
    """One client connection: a stdio process, or one HTTP `Mcp-Session-Id`.

    Transports feed it with `receive(message)` / `receive_bytes(data)` and get its
    messages through `outbound.send(message, related)`. Handlers reach it as
    `ctx.session`. Providers keep per-session things in `state` and register their
    teardown on `cleanup`, which runs when the session closes.
    """

    context_class = RequestContext
    #: Who is calling (a digest of the HTTP credential), for binding what a stateless request
    #: is handed (requestState, task ids) to its caller; None when nobody authenticated.
    principal: str | None = None
    #: The HTTP headers of a stateless request (for the `Mcp-Param-*` check); None elsewhere.
    routing_headers: Mapping[str, str] | None = None

    def __init__(self, core: ServerCore, outbound: Outbound, session_id: str | None = None) -> None:
        super().__init__(outbound)
        self.core = core
        self.methods = core._methods  # the composed table itself (core.methods is its view)
        self.fallback = core.fallback_handler  # type: ignore[method-assign]
        # Dual-era: a request carrying the 2026-07-28 envelope is served statelessly,
        # whatever came before it on this connection (basic/versioning.mdx).
        self.claim = core.stateless_claim
        self.session_id = session_id
        self.protocol_version: str | None = None
        self.client_info: JsonObject = {}
        self.client_capabilities: JsonObject = {}
        self.initialized = False
        self.log_threshold = 0  # every level until the client sets one
        self.subscriptions: set[str] = set()
        #: Called with each notification the client sends (roots/list_changed, progress...).
        self.on_client_notification: Callable[[str, JsonObject], None] | None = None
        #: Called when what the session remembers of its client changes (initialize,
        #: initialized, the log level, resource subscriptions): a transport whose sessions
        #: outlive this process (a shared store) saves them then.
        self.on_state_change: Callable[[ServerSession], None] | None = None
        # Made on first use: an idle session (thousands over HTTP) pays for none of them.
        self._state: dict[Hashable, Any] | None = None
        self._cleanup: contextlib.AsyncExitStack | None = None
        self._tasks: set[asyncio.Task[Any]] | None = None
        self._closing: asyncio.Task[None] | None = None
        self._list_changed: ListChangedAnnouncer | None = None

    @property
    def log_extra(self) -> dict[str, str] | None:
        return session_extra(self.session_id)

    @property
    def state(self) -> dict[Hashable, Any]:
        """Per-session values of providers, keyed by whatever the provider chooses."""
        if self._state is None:
            self._state = {}
        return self._state

    @property
    def cleanup(self) -> contextlib.AsyncExitStack:
        """Unwound when the session ends: providers push their per-session teardown here."""
        if self._cleanup is None:
            self._cleanup = contextlib.AsyncExitStack()
        return self._cleanup

    @property
    def has_cleanup(self) -> bool:
        """Whether anything was ever pushed on the cleanup stack."""
        return self._cleanup is not None

    async def run_cleanup(self) -> None:
        """Unwind the cleanup stack (if anything was ever pushed on it)."""
        if self._cleanup is not None:
            await self._cleanup.aclose()

    # -- the peer's hooks --------------------------------------------------------
    def batch_refusal(self) -> str | None:
        if allows_batches(self.protocol_version):
            return None
        return (
            "JSON-RPC batches are not supported by protocol version "
            f"{self.protocol_version or '(not negotiated)'}; send one message at a time"
        )

    def state_changed(self) -> None:
        """Tell the transport the session's remembered state changed (see on_state_change)."""
        if self.on_state_change is not None:
            self.on_state_change(self)

    def handle_notification(self, method: str, params: JsonObject, origin: Hashable) -> None:
        if method == "notifications/initialized":
            if not self.initialized:
                self.initialized = True
                self.state_changed()
        elif method == "notifications/roots/list_changed":
            self.core.roots_changed(self)
        if self.on_client_notification is not None:
            self.on_client_notification(method, params)

    def remote_error(self, code: int, message: str, data: Any, method: str) -> Exception:
        return ClientError(code, message, data)

    def closed_error(self) -> Exception:
        return ClientError(INTERNAL_ERROR, "session closed")

    # -- talking to the client ---------------------------------------------------
    def log(
        self,
        level: str,
        data: Any,
        logger: str | None = None,
        related_request_id: RequestId | None = None,
    ) -> None:
        """notifications/message, when `level` passes the client's threshold."""
        rank = LOG_LEVEL_RANK.get(level)
        if rank is None:
            raise ValueError(f"unknown log level {level!r}")
        if rank < self.log_threshold:
            return
        params: JsonObject = {"level": level, "data": data}
        if logger is not None:
            params["logger"] = logger
        self.notify("notifications/message", params, related_request_id)

    async def request(
        self, method: str, params: JsonObject | None = None, options: CallOptions | None = None
    ) -> JsonObject:
        """Ask the client something; refused at once when it lacks the capability."""
        needed = CLIENT_CAPABILITY_FOR.get(method)
        if needed is not None and needed not in self.client_capabilities:
            raise ClientError(
                INVALID_REQUEST, f"the client did not declare the '{needed}' capability"
            )
        return await super().request(method, params, options)

    def list_changed(self, kind: str) -> None:
        """Tell the client a list of `kind` changed: debounced, and written apart from any
        answer (core/list_changed.py)."""
        if self._list_changed is None:
            self._list_changed = ListChangedAnnouncer(self)
        self._list_changed.announce(kind)

    def send_apart(self, message: JsonObject) -> None:
        """Send `message` in a write of its own where the transport coalesces writes
        (stdio): what was sent before it goes first, what is sent after it goes later."""
        send_apart = getattr(self.outbound, "send_apart", None)
        if send_apart is None or self.closed:
            self.send(message)
        else:
            send_apart(message)

    # -- lifetime --------------------------------------------------------------
    def start_soon(self, work: Awaitable[Any]) -> None:
        """Run something for this session in the background; cancelled when it closes."""
        task = asyncio.ensure_future(work)
        if self._tasks is None:
            self._tasks = set()
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    def close(self, error: Exception | None = None) -> None:
        """End the session now: handlers are cancelled, our pending requests fail, and its
        teardown (providers' close hooks, then the cleanup stack) starts in the background;
        `await session.aclose()` to wait for it."""
        if self.closed:
            return
        super().close(error)
        if self._list_changed is not None:
            self._list_changed.close()
        for task in list(self._tasks or ()):
            task.cancel()
        self._closing = self.core.end_session(self)

    async def aclose(self) -> None:
        """Close and wait until everything the session started has stopped."""
        self.close()
        if self._closing is not None:
            await asyncio.shield(self._closing)


class StatelessSession(ServerSession):
    """The peer of one stateless HTTP exchange: every request it gets is served as a
    2026-07-28 request, and it belongs to no connection. The core does not track it
    (no provider session hooks run for it); `state` and `cleanup` are those every
    stateless request shares, server-wide, torn down when the server stops. Over HTTP the
    transport makes one per POST; on stdio the process's ServerSession serves both eras.
    """

    context_class: type[RequestContext] = StatelessContext

    def __init__(
        self,
        core: ServerCore,
        outbound: Outbound,
        *,
        principal: str | None = None,
        routing_headers: Mapping[str, str] | None = None,
    ) -> None:
        super().__init__(core, outbound)
        # Every request is stateless: the stateless entry serves them all.
        self.claim = None
        self.methods = {}
        self.fallback = core.stateless_entry.handler  # type: ignore[method-assign,assignment]
        self.initialized = True
        self.principal = principal
        self.routing_headers = routing_headers
        self._state = core.stateless_state
        self._cleanup = core.stateless_cleanup
        #: The error its request was answered with, if any (the transport picks the
        #: HTTP status from it: the revision gives some errors their own).
        self.error: McpError | None = None

    def error_response(self, request_id: RequestId, exc: McpError) -> JsonObject:
        self.error = exc
        return super().error_response(request_id, exc)

    def start_soon(self, work: Awaitable[Any]) -> None:
        self.core.start_soon(work)  # server-wide, like `state`

    def close(self, error: Exception | None = None) -> None:
        if not self.closed:
            JsonRpcPeer.close(self, error)  # nothing of its own to tear down


__all__ = ["ClientError", "Outbound", "ServerSession", "StatelessSession"]
