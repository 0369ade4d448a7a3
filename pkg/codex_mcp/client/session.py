"""ClientSession: MCP from the client's side, on the core's JSON-RPC peer (specs/design.md,
"The client")."""

from __future__ import annotations

import asyncio
import dataclasses
import inspect
import logging
from collections.abc import Awaitable, Callable, Hashable
from functools import lru_cache
from typing import Any

from codex_mcp.core import jsonrpc
from codex_mcp.core.errors import McpError
from codex_mcp.core.jsonrpc import METHOD_NOT_FOUND, JsonObject
from codex_mcp.core.peer import CallOptions, Inbound, ProgressCallback
from codex_mcp.core.request_meta import UNSUPPORTED_PROTOCOL_VERSION
from codex_mcp.core.versions import STATELESS_VERSIONS, SUPPORTED_VERSIONS

from .errors import (
    ConnectionClosed,
    McpClientError,
    RequestTimeout,
    SessionExpired,
    TransportError,
)
from .stateless import (
    AnsweringPeer,
    StatelessProfile,
    is_stateless_error,
    server_info_of,
    settle,
)
from .transports.base import Transport
from .types import InitializeResult

log = logging.getLogger("codex_mcp.client")

#: Answers one server-to-client request: gets the params (and, if it takes a second
#: argument, the request's context: `ctx.related_request_id` is the call of ours it belongs
#: to, when the transport can tell), returns the result (sync or async). Raise
#: McpError to answer with a specific error.
RequestHandler = Callable[..., JsonObject | Awaitable[JsonObject]]
NotificationHandler = Callable[[str, JsonObject], object]
ProgressHandler = ProgressCallback


class _TransportOutbound:
    """The peer's outbound: `transport.send`, awaited."""

    __slots__ = ("transport",)

    def __init__(self, transport: Transport) -> None:
        self.transport = transport

    def send(self, message: Any, related: Hashable = None) -> Awaitable[None] | None:
        return self.transport.send(message)


class _NowaitOutbound:
    """The outbound of a transport that queues a message at once (stdio): its `send_nowait`
    itself, with nothing to await unless the pipe is backed up (no layer between: a relay
    sends every call through it)."""

    __slots__ = ("send",)

    def __init__(self, send_nowait: Callable[..., Awaitable[None] | None]) -> None:
        self.send = send_nowait


class ClientSession(AnsweringPeer):
    strict_version = False  # take what a lenient server sends, as earlier clients did

    def __init__(self, transport: Transport) -> None:
        send_nowait = getattr(transport, "send_nowait", None)
        super().__init__(
            _TransportOutbound(transport) if send_nowait is None else _NowaitOutbound(send_nowait)
        )
        self.transport = transport
        self.request_handlers: dict[str, RequestHandler] = {"ping": lambda _params: {}}
        self.notification_handlers: list[NotificationHandler] = []
        #: Called after an expired HTTP session was re-established (caches may be stale).
        self.on_reinitialized: Callable[[InitializeResult], object] | None = None
        #: Asked, after that, before a request is sent again (the server may be another
        #: process now): None sends it, anything else is its answer instead.
        self.before_resend: (
            Callable[[str, JsonObject | None], Awaitable[JsonObject | None]] | None
        ) = None
        #: Called once when the connection ends (the server died, or we closed it), after
        #: every pending request has failed.
        self.on_closed: Callable[[ConnectionClosed], object] | None = None
        self.init_result: InitializeResult | None = None
        #: Set when the server speaks 2026-07-28: every request then carries its envelope.
        self.stateless: StatelessProfile | None = None
        self._closed_by: ConnectionClosed | None = None
        self._init_params: JsonObject | None = None
        self._init_timeout: float | None = None
        self._generation = 0
        self._reinit_lock = asyncio.Lock()

    # -- lifetime --------------------------------------------------------------
    async def start(self) -> None:
        await self.transport.start(self.receive, self._on_transport_closed)

    async def aclose(self) -> None:
        if not self.closed:
            self._on_transport_closed(ConnectionClosed("client closed the connection"))
        await self.transport.close()

    def _on_transport_closed(self, exc: BaseException | None) -> None:
        if self.closed:
            return
        if isinstance(exc, ConnectionClosed):
            closed = exc
        else:
            detail = f": {exc}" if exc else ""
            closed = ConnectionClosed(f"connection to the MCP server closed{detail}")
        self._closed_by = closed
        pending = self.outgoing
        self.close(closed)
        if pending:
            log.warning("%s; %d pending request(s) failed", closed, pending)
        if self.on_closed is not None:
            self._call_back(self.on_closed, closed)

    async def initialize(self, params: JsonObject, timeout: float | None) -> InitializeResult:
        """initialize, check the negotiated version, then notifications/initialized."""
        self._init_params, self._init_timeout = params, timeout
        raw = await super().request("initialize", params, CallOptions(timeout=timeout))
        result = InitializeResult.from_json(raw)
        if result.protocol_version not in SUPPORTED_VERSIONS:
            raise McpClientError(
                f"server chose protocol version {result.protocol_version!r}; "
                f"this client speaks {', '.join(SUPPORTED_VERSIONS)}"
            )
        self.transport.initialized(result.protocol_version)
        await self.notify_async("notifications/initialized")
        self.init_result = result
        return result

    async def discover(
        self,
        era: StatelessProfile,
        timeout: float | None,
        *,
        fall_back: bool,
        retried: bool = False,
    ) -> InitializeResult | None:
        """Probe with server/discover (2026-07-28). A DiscoverResult, or a stateless error,
        makes the session stateless; with `fall_back`, anything else (another error, no
        answer in time, an HTTP error without a stateless body) returns None and the
        caller initializes instead: the spec's dual-era client (versioning.mdx)."""
        self.stateless = era
        self.transport.use_stateless(era.version)
        try:
            raw = await self._discover_request(timeout)
        except McpError as exc:
            mutual = None if retried else _mutual_version(exc)
            if mutual is not None:  # -32022 naming a version we speak: once more with it
                return await self.discover(
                    dataclasses.replace(era, version=mutual), timeout, fall_back=False, retried=True
                )
            if fall_back and not is_stateless_error(exc):
                self._leave_stateless()
                return None
            raise
        except (TransportError, RequestTimeout):
            if not fall_back or self.closed:
                raise
            self._leave_stateless()
            return None
        versions = raw.get("supportedVersions")
        if not isinstance(versions, list) or era.version not in versions:
            mutual = next(
                (v for v in STATELESS_VERSIONS if isinstance(versions, list) and v in versions),
                None,
            )
            if mutual is None:
                if fall_back:
                    self._leave_stateless()
                    return None
                raise McpClientError(f"the server speaks {versions!r}, not {era.version}")
            era = dataclasses.replace(era, version=mutual)
        self.stateless = era
        self.transport.use_stateless(era.version)
        self.init_result = dataclasses.replace(
            InitializeResult.from_json(raw),
            protocol_version=era.version,
            server_info=server_info_of(raw),
        )
        return self.init_result

    async def _discover_request(self, timeout: float | None) -> JsonObject:
        """server/discover, sent again once after a transient transport failure (a kept-alive
        connection the server had closed): it only reads, so a second one is harmless."""
        try:
            return await self.request("server/discover", None, CallOptions(timeout=timeout))
        except TransportError as exc:
            if not exc.retryable or self.closed:
                raise
            log.info("server/discover failed (%s); once more", exc)
            return await self.request("server/discover", None, CallOptions(timeout=timeout))

    def _leave_stateless(self) -> None:
        self.stateless = None
        self.transport.use_stateless(None)

    async def answer_input(self, method: str, params: JsonObject) -> JsonObject:
        """Answer one of the server's input requests (2026-07-28) with the handler that
        answers the same request from a legacy server."""
        handler = self.request_handlers.get(method)
        if handler is None:
            raise McpClientError(f"the server asked for {method}, which this client cannot answer")
        return await _answer(handler, params, Inbound(self, None, method, None))

    async def _reestablish(self, generation: int) -> None:
        """Re-run the handshake after a 404, once for all requests that saw the same session."""
        async with self._reinit_lock:
            if generation != self._generation or self._init_params is None:
                return  # another request already did it
            log.info("MCP session expired on the server; initializing a new one")
            self.transport.reset_session()
            result = await self.initialize(self._init_params, self._init_timeout)
            self._generation += 1
            if self.on_reinitialized is not None:
                self.on_reinitialized(result)

    # -- outgoing --------------------------------------------------------------
    async def request(
        self,
        method: str,
        params: JsonObject | None = None,
        options: CallOptions | None = None,
        *,
        timeout: float | None = None,
        on_progress: ProgressHandler | None = None,
        meta: JsonObject | None = None,
    ) -> JsonObject:
        """Send a request and return its result; raises McpError, RequestTimeout or
        TransportError. An expired HTTP session is re-established and the request sent
        again, once (the server never saw it: it had no session to run it in)."""
        if options is None:
            options = CallOptions(timeout=timeout, on_progress=on_progress, meta=meta)
        era = self.stateless
        if era is not None:
            options = era.stamp(options, self.transport.cancels_by_notification)
            result = await super().request(method, params, options)
            return await settle(self, method, params, options, result)
        generation = self._generation
        try:
            return await super().request(method, params, options)
        except SessionExpired:
            await self._reestablish(generation)
            if self.before_resend is not None:
                answered = await self.before_resend(method, params)
                if answered is not None:
                    return answered
            return await super().request(method, params, options)

    async def notify_async(self, method: str, params: JsonObject | None = None) -> None:
        """Send a notification and wait until the transport has delivered it."""
        if self.closed:
            raise self.closed_error()
        await self.transport.send(jsonrpc.notification(method, params))

    # -- the peer's hooks --------------------------------------------------------
    def fallback(self, peer: Any, params: JsonObject, ctx: Inbound) -> Awaitable[JsonObject]:
        handler = self.request_handlers.get(ctx.method)
        if handler is None:
            raise McpError(METHOD_NOT_FOUND, f"Method not found: {ctx.method}")
        return _answer(handler, params, ctx)

    def handle_notification(self, method: str, params: JsonObject, origin: Hashable) -> None:
        for listener in list(self.notification_handlers):
            self._call_back(listener, method, params)

    def closed_error(self) -> Exception:
        return self._closed_by or ConnectionClosed("connection to the MCP server closed")

    def timeout_error(self, method: str, timeout: float) -> Exception:
        return RequestTimeout(method, timeout)


def _mutual_version(exc: McpError) -> str | None:
    """From an UnsupportedProtocolVersion error, a stateless version both sides speak (the
    one asked, too: a server may refuse it for a reason of its own, such as a header it
    could not read, and list it as supported all the same; one retry tells)."""
    if exc.code != UNSUPPORTED_PROTOCOL_VERSION or not isinstance(exc.data, dict):
        return None
    supported = exc.data.get("supported")
    for version in STATELESS_VERSIONS:
        if isinstance(supported, list) and version in supported:
            return version
    return None


async def _answer(handler: RequestHandler, params: JsonObject, ctx: Inbound) -> JsonObject:
    result = handler(params, ctx) if takes_context(handler) else handler(params)
    if inspect.isawaitable(result):
        result = await result
    return result


@lru_cache(maxsize=256)
def takes_context(handler: Callable[..., Any]) -> bool:
    try:
        parameters = inspect.signature(handler).parameters.values()
    except (TypeError, ValueError):
        return False
    positional = [
        p
        for p in parameters
        if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD, p.VAR_POSITIONAL)
    ]
    return len(positional) >= 2 or any(p.kind == p.VAR_POSITIONAL for p in positional)


__all__ = ["ClientSession", "NotificationHandler", "ProgressHandler", "RequestHandler"]
