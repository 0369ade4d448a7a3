"""ClientSession: JSON-RPC over one transport, from the client's side.

It correlates responses to requests, fails every pending request the moment the transport
dies (the official SDK waits forever there: python-sdk #332), sends notifications/cancelled
when a request times out or its caller gives up, answers server-to-client requests
(sampling, elicitation, roots, ping) with registered handlers, routes progress notifications
to the request that asked for them, and re-initializes once when an HTTP session expires.
"""

from __future__ import annotations

import asyncio
import inspect
import logging
from collections.abc import Awaitable, Callable
from typing import Any

from codex_mcp.core import jsonrpc
from codex_mcp.core.jsonrpc import (
    INTERNAL_ERROR,
    METHOD_NOT_FOUND,
    JsonObject,
    JsonRpcError,
    RequestId,
)
from codex_mcp.core.versions import SUPPORTED_VERSIONS

from .errors import ConnectionClosed, McpClientError, McpError, RequestTimeout, SessionExpired
from .transports.base import Transport
from .types import InitializeResult

log = logging.getLogger("codex_mcp.client")

#: Answers one server-to-client request: gets the params, returns the result (sync or async).
#: Raise JsonRpcError to answer with a specific error.
RequestHandler = Callable[[JsonObject], JsonObject | Awaitable[JsonObject]]
NotificationHandler = Callable[[str, JsonObject], object]
ProgressHandler = Callable[[JsonObject], object]


class ClientSession:
    def __init__(self, transport: Transport) -> None:
        self.transport = transport
        self.request_handlers: dict[str, RequestHandler] = {"ping": lambda _params: {}}
        self.notification_handlers: list[NotificationHandler] = []
        #: Called after an expired HTTP session was re-established (caches may be stale).
        self.on_reinitialized: Callable[[InitializeResult], object] | None = None
        self.init_result: InitializeResult | None = None
        self._pending: dict[int, asyncio.Future[JsonObject]] = {}
        self._progress: dict[RequestId, ProgressHandler] = {}
        self._serving: dict[RequestId, asyncio.Task[None]] = {}
        self._background: set[asyncio.Task[Any]] = set()
        self._next_id = 0
        self._closed: ConnectionClosed | None = None
        self._init_params: JsonObject | None = None
        self._init_timeout: float | None = None
        self._generation = 0
        self._reinit_lock = asyncio.Lock()

    # -- lifetime --------------------------------------------------------------
    async def start(self) -> None:
        await self.transport.start(self._on_message, self._on_closed)

    @property
    def closed(self) -> bool:
        return self._closed is not None

    async def aclose(self) -> None:
        if self._closed is None:
            self._on_closed(ConnectionClosed("client closed the connection"))
        await self.transport.close()
        for task in list(self._background):
            task.cancel()

    async def initialize(self, params: JsonObject, timeout: float | None) -> InitializeResult:
        """initialize, check the negotiated version, then notifications/initialized."""
        self._init_params, self._init_timeout = params, timeout
        raw = await self._request_once("initialize", params, timeout, None)
        result = InitializeResult.from_json(raw)
        if result.protocol_version not in SUPPORTED_VERSIONS:
            raise McpClientError(
                f"server chose protocol version {result.protocol_version!r}; "
                f"this client speaks {', '.join(SUPPORTED_VERSIONS)}"
            )
        self.transport.initialized(result.protocol_version)
        await self.notify("notifications/initialized")
        self.init_result = result
        return result

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
        *,
        timeout: float | None = None,
        on_progress: ProgressHandler | None = None,
    ) -> JsonObject:
        """Send a request and return its result; raises McpError, RequestTimeout or
        TransportError. An expired HTTP session is re-established and the request sent again,
        once."""
        generation = self._generation
        try:
            return await self._request_once(method, params, timeout, on_progress)
        except SessionExpired:
            await self._reestablish(generation)
            return await self._request_once(method, params, timeout, on_progress)

    async def _request_once(
        self,
        method: str,
        params: JsonObject | None,
        timeout: float | None,
        on_progress: ProgressHandler | None,
    ) -> JsonObject:
        if self._closed is not None:
            raise self._closed
        self._next_id += 1
        request_id = self._next_id
        if on_progress is not None:
            params = dict(params or {})
            params["_meta"] = {**(params.get("_meta") or {}), "progressToken": request_id}
            self._progress[request_id] = on_progress
        future: asyncio.Future[JsonObject] = asyncio.get_running_loop().create_future()
        self._pending[request_id] = future
        scope = asyncio.timeout(timeout)
        try:
            async with scope:
                await self.transport.send(jsonrpc.request(request_id, method, params))
                return await future
        except TimeoutError:
            if not scope.expired():
                raise
            self._cancel_remote(request_id, method, f"timed out after {timeout:g} s")
            raise RequestTimeout(method, timeout or 0) from None
        except asyncio.CancelledError:
            self._cancel_remote(request_id, method, "cancelled by the client")
            raise
        except McpError as exc:
            exc.method = exc.method or method
            raise
        finally:
            self._pending.pop(request_id, None)
            self._progress.pop(request_id, None)
            if not future.done():
                future.cancel()

    async def notify(self, method: str, params: JsonObject | None = None) -> None:
        if self._closed is not None:
            raise self._closed
        await self.transport.send(jsonrpc.notification(method, params))

    def _cancel_remote(self, request_id: int, method: str, reason: str) -> None:
        # The spec forbids cancelling initialize; a dead connection has nobody to tell.
        if method == "initialize" or self._closed is not None:
            return
        message = jsonrpc.notification(
            "notifications/cancelled", {"requestId": request_id, "reason": reason}
        )
        self._spawn(self._send_quietly(message))

    async def _send_quietly(self, message: JsonObject) -> None:
        try:
            await asyncio.wait_for(self.transport.send(message), 5.0)
        except (McpClientError, TimeoutError) as exc:
            log.debug("could not send %s: %s", message.get("method") or "response", exc)

    def _spawn(self, coro: Any) -> None:
        task = asyncio.get_running_loop().create_task(coro)
        self._background.add(task)
        task.add_done_callback(self._background.discard)

    # -- incoming --------------------------------------------------------------
    def _on_message(self, message: Any) -> None:
        if isinstance(message, list):
            for item in message:
                self._on_message(item)
            return
        if not isinstance(message, dict):
            log.warning("ignoring a non-object JSON-RPC message: %r", message)
            return
        method = message.get("method")
        if method is None:
            self._on_response(message)
        elif not isinstance(method, str):
            log.warning("ignoring a message with a non-string method: %r", message)
        elif "id" in message:
            self._on_request(message["id"], method, message.get("params") or {})
        else:
            self._on_notification(method, message.get("params") or {})

    def _on_response(self, message: JsonObject) -> None:
        request_id = message.get("id")
        if isinstance(request_id, str) and request_id.isdigit():
            request_id = int(request_id)  # a server that stringified our id
        future = self._pending.get(request_id) if isinstance(request_id, int) else None
        if future is None or future.done():
            if request_id is None and "error" in message:
                log.warning("server reported an error: %s", message["error"])
            else:
                log.debug("response to unknown request %r ignored", request_id)
            return
        error = message.get("error")
        if error is not None:
            if not isinstance(error, dict):
                error = {"code": INTERNAL_ERROR, "message": str(error)}
            code = error.get("code")
            future.set_exception(
                McpError(
                    code if isinstance(code, int) else INTERNAL_ERROR,
                    str(error.get("message", "")),
                    error.get("data"),
                )
            )
        else:
            result = message.get("result")
            future.set_result(result if isinstance(result, dict) else {})

    def _on_request(self, request_id: Any, method: str, params: Any) -> None:
        task = asyncio.get_running_loop().create_task(self._serve(request_id, method, params))
        self._serving[request_id] = task
        task.add_done_callback(lambda _t: self._serving.pop(request_id, None))

    async def _serve(self, request_id: Any, method: str, params: Any) -> None:
        handler = self.request_handlers.get(method)
        try:
            if handler is None:
                raise JsonRpcError(METHOD_NOT_FOUND, f"Method not found: {method}")
            result = handler(params if isinstance(params, dict) else {})
            if inspect.isawaitable(result):
                result = await result
            response = jsonrpc.result_response(request_id, result)
        except JsonRpcError as exc:
            response = jsonrpc.error_response(request_id, exc.code, exc.message, exc.data)
        except Exception as exc:
            log.exception("handler for server request %s failed", method)
            response = jsonrpc.error_response(request_id, INTERNAL_ERROR, f"Internal error: {exc}")
        if self._closed is None:
            await self._send_quietly(response)

    def _on_notification(self, method: str, params: Any) -> None:
        params = params if isinstance(params, dict) else {}
        if method == "notifications/cancelled":
            task = self._serving.get(params.get("requestId"))
            if task is not None:
                task.cancel()  # the server no longer wants the answer: send none
        elif method == "notifications/progress":
            handler = self._progress.get(params.get("progressToken"))
            if handler is not None:
                self._call(handler, params)
        for listener in list(self.notification_handlers):
            self._call(listener, method, params)

    def _call(self, fn: Callable[..., object], *args: Any) -> None:
        try:
            result = fn(*args)
            if inspect.isawaitable(result):
                self._spawn(result)
        except Exception:
            log.exception("notification handler %r failed", fn)

    def _on_closed(self, exc: BaseException | None) -> None:
        if self._closed is not None:
            return
        if isinstance(exc, ConnectionClosed):
            closed = exc
        else:
            detail = f": {exc}" if exc else ""
            closed = ConnectionClosed(f"connection to the MCP server closed{detail}")
        self._closed = closed
        pending = list(self._pending.values())
        self._pending.clear()
        for future in pending:
            if not future.done():
                future.set_exception(closed)
        for task in list(self._serving.values()):
            task.cancel()
        if pending:
            log.warning("%s; %d pending request(s) failed", closed, len(pending))


__all__ = ["ClientSession", "NotificationHandler", "ProgressHandler", "RequestHandler"]
