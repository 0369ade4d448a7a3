"""One client connection: the dispatcher between decoded messages and handlers.

Transports call `receive()` with each decoded JSON value and give the session an
`Outbound` to write through. The session answers every request exactly once
(unless the client cancelled it), runs requests concurrently, correlates the
client's answers to our own server-to-client requests, and never touches I/O.
"""

from __future__ import annotations

import asyncio
import logging
import sys
from collections.abc import Callable, Coroutine
from typing import TYPE_CHECKING, Any, Protocol

from . import jsonrpc
from .context import LOG_LEVEL_RANK, RequestContext
from .jsonrpc import (
    INTERNAL_ERROR,
    INVALID_PARAMS,
    INVALID_REQUEST,
    METHOD_NOT_FOUND,
    JsonObject,
    JsonRpcError,
    RequestId,
    error_response,
    is_valid_id,
    result_response,
)
from .ready import Ready
from .versions import allows_batches

if TYPE_CHECKING:
    from .server import ServerCore

log = logging.getLogger("codex_mcp.session")

if sys.version_info >= (3, 12):

    def _start_task(work: Coroutine[Any, Any, None]) -> asyncio.Task[None]:
        """Run the request's first step now, inside its own task: a handler that never
        waits (most tools) is answered without a trip through the event loop."""
        return asyncio.Task(work, loop=asyncio.get_running_loop(), eager_start=True)

else:  # 3.11 has no eager tasks; running the first step outside a task would break
    # asyncio.timeout() and current_task() in tools, so every request gets a scheduled task.

    def _start_task(work: Coroutine[Any, Any, None]) -> asyncio.Task[None]:
        return asyncio.get_running_loop().create_task(work)


# Server-to-client methods and the client capability each needs.
_CLIENT_CAPABILITY_FOR = {
    "sampling/createMessage": "sampling",
    "elicitation/create": "elicitation",
    "roots/list": "roots",
}


class Outbound(Protocol):
    """Where a session's messages go. Must not block: queue or buffer and return."""

    def send(
        self, message: JsonObject | list[JsonObject], related_request_id: RequestId | None = None
    ) -> None: ...


class ClientError(JsonRpcError):
    """The client answered one of our requests with an error, or could not be asked."""


class _Batch:
    """Collects the responses of one JSON-RPC batch and sends them as one array."""

    __slots__ = ("outbound", "pending", "responses")

    def __init__(self, outbound: Outbound) -> None:
        self.outbound = outbound
        self.pending = 0
        self.responses: list[JsonObject] = []

    def add(self, response: JsonObject | None) -> None:
        if response is not None:
            self.responses.append(response)
        self.pending -= 1
        self.flush_if_done()

    def flush_if_done(self) -> None:
        if self.pending == 0 and self.responses:
            self.outbound.send(self.responses)
            self.responses = []


class ServerSession:
    def __init__(self, core: ServerCore, outbound: Outbound, session_id: str | None = None) -> None:
        self.core = core
        self.outbound = outbound
        self.session_id = session_id
        self.protocol_version: str | None = None
        self.client_info: JsonObject = {}
        self.client_capabilities: JsonObject = {}
        self.initialized = False
        self.closed = False
        self.log_threshold = 0  # every level until the client sets one
        self.subscriptions: set[str] = set()
        #: Called with each notification the client sends (roots/list_changed, progress...).
        self.on_client_notification: Callable[[str, JsonObject], None] | None = None
        self._in_flight: dict[RequestId, RequestContext] = {}
        self._outgoing: dict[RequestId, asyncio.Future[JsonObject]] = {}
        self._next_outgoing_id = 0

    # -- input -----------------------------------------------------------------
    def receive_bytes(self, data: bytes | bytearray | memoryview) -> None:
        """Decode one JSON text and handle it; malformed JSON gets a -32700 reply."""
        try:
            message = jsonrpc.decode(data)
        except JsonRpcError as exc:
            self._send(error_response(None, exc.code, exc.message))
            return
        self.receive(message)

    def receive(self, message: Any) -> None:
        if type(message) is dict:
            self._receive_one(message, None)
        elif type(message) is list:
            self._receive_batch(message)
        else:
            self._send(error_response(None, INVALID_REQUEST, "Invalid Request: not a JSON object"))

    def _receive_batch(self, messages: list[Any]) -> None:
        if not messages:
            self._send(error_response(None, INVALID_REQUEST, "Invalid Request: empty batch"))
            return
        if not allows_batches(self.protocol_version):
            self._send(
                error_response(
                    None,
                    INVALID_REQUEST,
                    "Invalid Request: JSON-RPC batches are not supported by protocol version "
                    f"{self.protocol_version or '(not negotiated)'}; send one message at a time",
                )
            )
            return
        batch = _Batch(self.outbound)
        batch.pending = len(messages)
        for message in messages:
            if type(message) is dict:
                self._receive_one(message, batch)
            else:
                batch.add(error_response(None, INVALID_REQUEST, "Invalid Request: not an object"))

    def _receive_one(self, message: JsonObject, batch: _Batch | None) -> None:
        method = message.get("method")
        has_id = "id" in message
        request_id = message.get("id")
        # Errors about a message go out tagged with its id when it has a usable one, so an
        # HTTP transport can put them on that request's stream.
        related = request_id if has_id and is_valid_id(request_id) else None
        if method is None:
            if has_id and ("result" in message or "error" in message):
                self._resolve_outgoing(message)
                self._reply(None, None, batch)
            else:
                self._reply(related, _invalid(request_id, "missing 'method'"), batch)
            return
        if message.get("jsonrpc") != "2.0":
            reply = _invalid(request_id, "'jsonrpc' must be \"2.0\"") if has_id else None
            self._reply(related, reply, batch)
            return
        if not isinstance(method, str):
            self._reply(related, _invalid(request_id, "'method' must be a string"), batch)
            return
        params = message.get("params")
        if not has_id:
            if params is None or type(params) is dict:
                self._handle_notification(method, params or {})
            self._reply(None, None, batch)
            return
        if related is None:
            self._reply(None, _invalid(None, "'id' must be a string or an integer"), batch)
            return
        if params is None:
            params = {}
        elif type(params) is not dict:
            self._reply(
                related,
                error_response(related, INVALID_PARAMS, "Invalid params: must be an object"),
                batch,
            )
            return
        if related in self._in_flight:
            self._reply(
                related, _invalid(related, f"request id {related!r} is already in flight"), batch
            )
            return
        self._start_request(related, method, params, batch)

    def _start_request(
        self, request_id: RequestId, method: str, params: JsonObject, batch: _Batch | None
    ) -> None:
        entry = self.core.methods.get(method)
        if entry is not None and entry.inline:
            try:
                result = entry.handler(self, params, None)
            except JsonRpcError as exc:
                self._reply(request_id, _error_from(request_id, exc), batch)
            else:
                self._reply(request_id, result_response(request_id, result), batch)
            return
        handler = entry.handler if entry is not None else self.core.fallback_handler
        meta = params.get("_meta")
        ctx = RequestContext(self, request_id, method, meta if type(meta) is dict else None)
        # A handler checks its params before returning its awaitable, so a bad call is
        # answered here without a task.
        try:
            work = handler(self, params, ctx)
        except JsonRpcError as exc:
            self._reply(request_id, _error_from(request_id, exc), batch)
            return
        except Exception as exc:
            log.error("unhandled error in %s", method, exc_info=exc)
            self._reply(request_id, _internal_error(request_id, exc), batch)
            return
        if type(work) is Ready:  # answered without waiting: no task, like ping
            self._reply(request_id, result_response(request_id, work.value), batch)
            return
        self._in_flight[request_id] = ctx
        ctx.task = _start_task(self._run(request_id, work, ctx, batch))

    async def _run(
        self, request_id: RequestId, work: Any, ctx: RequestContext, batch: _Batch | None
    ) -> None:
        """Run one request and answer it, unless it was cancelled meanwhile. Answering from
        inside the task (not a done-callback) saves a loop turn per request."""
        response: JsonObject | None
        try:
            result = await work
        except asyncio.CancelledError:
            if self._in_flight.get(request_id) is ctx:
                # Nobody asked for this: the handler cancelled itself. Still answer once.
                del self._in_flight[request_id]
                self._reply(request_id, _cancelled_by_handler(request_id), batch)
                return
            if batch is not None:
                batch.add(None)  # the client cancelled it: no answer, but the batch completes
            raise
        except JsonRpcError as exc:
            response = _error_from(request_id, exc)
        except Exception as exc:
            log.error("unhandled error in %s", ctx.method, exc_info=exc)
            response = _internal_error(request_id, exc)
        else:
            response = result_response(request_id, result)
        if self._in_flight.get(request_id) is ctx:
            del self._in_flight[request_id]
        else:
            response = None  # cancelled by the client (or the session closed) after all
        self._reply(request_id, response, batch)

    def _reply(
        self, request_id: RequestId | None, response: JsonObject | None, batch: _Batch | None
    ) -> None:
        if batch is not None:
            batch.add(response)
        elif response is not None:
            self._send(response, request_id)

    def _handle_notification(self, method: str, params: JsonObject) -> None:
        if method == "notifications/cancelled":
            self.cancel_request(params.get("requestId"), params.get("reason"))
        elif method == "notifications/initialized":
            self.initialized = True
        if self.on_client_notification is not None:
            self.on_client_notification(method, params)

    def cancel_request(self, request_id: Any, reason: Any = None) -> bool:
        """Stop an in-flight request and suppress its response. Unknown ids are ignored."""
        if not is_valid_id(request_id):
            return False
        ctx = self._in_flight.pop(request_id, None)
        if ctx is None:
            return False
        ctx.cancelled = True
        if ctx.task is not None:
            ctx.task.cancel(reason if isinstance(reason, str) else None)
        log.debug("request %r cancelled: %s", request_id, reason)
        return True

    # -- output ----------------------------------------------------------------
    def _send(self, message: JsonObject, related_request_id: RequestId | None = None) -> None:
        if not self.closed:
            self.outbound.send(message, related_request_id)

    def notify(
        self,
        method: str,
        params: JsonObject | None = None,
        related_request_id: RequestId | None = None,
    ) -> None:
        self._send(jsonrpc.notification(method, params), related_request_id)

    def log(
        self,
        level: str,
        data: Any,
        logger: str | None = None,
        related_request_id: RequestId | None = None,
    ) -> None:
        rank = LOG_LEVEL_RANK.get(level)
        if rank is None:
            raise ValueError(f"unknown log level {level!r}")
        if rank < self.log_threshold:
            return
        params: JsonObject = {"level": level, "data": data}
        if logger is not None:
            params["logger"] = logger
        self.notify("notifications/message", params, related_request_id)

    async def send_request(
        self,
        method: str,
        params: JsonObject | None = None,
        related_request_id: RequestId | None = None,
        timeout: float | None = None,
    ) -> JsonObject:
        """Ask the client something and wait for its answer."""
        needed = _CLIENT_CAPABILITY_FOR.get(method)
        if needed is not None and needed not in self.client_capabilities:
            raise ClientError(
                INVALID_REQUEST, f"the client did not declare the '{needed}' capability"
            )
        if self.closed:
            raise ClientError(INTERNAL_ERROR, "session closed")
        self._next_outgoing_id += 1
        outgoing_id = self._next_outgoing_id
        future: asyncio.Future[JsonObject] = asyncio.get_running_loop().create_future()
        self._outgoing[outgoing_id] = future
        self._send(jsonrpc.request(outgoing_id, method, params), related_request_id)
        try:
            return await asyncio.wait_for(future, timeout)
        except (asyncio.CancelledError, TimeoutError):
            # Tell the client we no longer need the answer.
            self.notify(
                "notifications/cancelled",
                {"requestId": outgoing_id, "reason": "no longer needed"},
                related_request_id,
            )
            raise
        finally:
            self._outgoing.pop(outgoing_id, None)

    def _resolve_outgoing(self, message: JsonObject) -> None:
        future = self._outgoing.pop(message.get("id"), None)  # type: ignore[arg-type]
        if future is None or future.done():
            log.debug("response to unknown request id %r ignored", message.get("id"))
            return
        error = message.get("error")
        if error is not None:
            if not isinstance(error, dict):
                error = {"code": INTERNAL_ERROR, "message": str(error)}
            future.set_exception(
                ClientError(
                    int(error.get("code", INTERNAL_ERROR)),
                    str(error.get("message", "")),
                    error.get("data"),
                )
            )
        else:
            result = message.get("result")
            future.set_result(result if isinstance(result, dict) else {"value": result})

    # -- lifetime --------------------------------------------------------------
    @property
    def in_flight(self) -> int:
        return len(self._in_flight)

    async def drain(self, timeout: float) -> None:
        """Let in-flight requests finish (bounded), then cancel what is left."""
        tasks = [ctx.task for ctx in self._in_flight.values() if ctx.task is not None]
        if tasks:
            _, pending = await asyncio.wait(tasks, timeout=timeout)
            for task in pending:
                task.cancel()
            if pending:
                await asyncio.wait(pending, timeout=1.0)

    def close(self) -> None:
        """Stop everything: in-flight handlers are cancelled, our pending requests fail."""
        if self.closed:
            return
        self.closed = True
        for ctx in self._in_flight.values():
            ctx.cancelled = True
            if ctx.task is not None:
                ctx.task.cancel()
        self._in_flight.clear()
        for future in self._outgoing.values():
            if not future.done():
                future.set_exception(ClientError(INTERNAL_ERROR, "session closed"))
        self._outgoing.clear()
        self.core.forget_session(self)


def _invalid(request_id: Any, detail: str) -> JsonObject:
    return error_response(
        request_id if is_valid_id(request_id) else None,
        INVALID_REQUEST,
        f"Invalid Request: {detail}",
    )


def _internal_error(request_id: RequestId, exc: Exception) -> JsonObject:
    return error_response(request_id, INTERNAL_ERROR, f"Internal error: {exc}")


def _cancelled_by_handler(request_id: RequestId) -> JsonObject:
    return error_response(request_id, INTERNAL_ERROR, "Internal error: the handler was cancelled")


def _error_from(request_id: RequestId, exc: JsonRpcError) -> JsonObject:
    return error_response(request_id, exc.code, exc.message, exc.data)


__all__ = ["METHOD_NOT_FOUND", "ClientError", "Outbound", "ServerSession"]
