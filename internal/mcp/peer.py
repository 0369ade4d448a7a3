"""JsonRpcPeer: one end of a JSON-RPC 2.0 connection, the same for servers and clients.

It is the one place where JSON-RPC lives: it checks envelopes, runs each incoming
request (on the spot when its handler never waits, else in a task of its own), answers
every request exactly once (none when the peer cancelled it), collects batch answers,
mints ids for our own requests and correlates their answers, routes progress to them,
and sends `notifications/cancelled` when we abandon one. It knows nothing of MCP's
methods (the server and client sessions above it do) and nothing of I/O (the transport
below gives it decoded messages and an `Outbound` to write through).
"""

from __future__ import annotations

import asyncio
import dataclasses
import inspect
import logging
import sys
from collections.abc import Awaitable, Callable, Coroutine, Hashable
from dataclasses import dataclass
from typing import Any, Protocol

from . import jsonrpc
from .jsonrpc import (
    INTERNAL_ERROR,
    INVALID_PARAMS,
    INVALID_REQUEST,
    METHOD_NOT_FOUND,
    JsonObject,
    JsonRpcError,
    RequestId,
    error_from_wire,
    error_response,
    is_valid_id,
    response_id,
    result_response,
)
from .ready import Ready

log = logging.getLogger("codex_mcp.peer")

CANCELLED = "notifications/cancelled"
PROGRESS = "notifications/progress"

#: Called with the params of each notifications/progress for one of our requests.
ProgressCallback = Callable[[JsonObject], object]


class Outbound(Protocol):
    """Where a peer's messages go. `related` names the request a message belongs to (the
    response to it, or progress, logs and requests made while serving it) so a transport
    with several streams can put it on that request's stream; for a reply to a message that
    had no usable id (an invalid message, a batch) it is the `origin` the transport passed
    to `receive`. Server transports queue and return None: the hot path never awaits.
    A transport whose writes are asynchronous (a client's HTTP POST) returns an awaitable,
    which raises if the message could not be delivered."""

    def send(
        self, message: JsonObject | list[JsonObject], related: Hashable | None = None
    ) -> Awaitable[None] | None: ...


@dataclass(frozen=True, slots=True)
class CallOptions:
    """How to send one request of ours."""

    #: Seconds to wait for the answer; then the request is abandoned (see cancel_on_abandon).
    timeout: float | None = None
    #: Receives notifications/progress for this request (a progressToken is added for it).
    on_progress: ProgressCallback | None = None
    #: `_meta` to send with the request (a relay forwards its caller's here).
    meta: JsonObject | None = None
    #: Tell the peer with notifications/cancelled when we stop waiting (timeout, cancelled).
    cancel_on_abandon: bool = True
    #: The incoming request this one is made on behalf of (routes it onto that request's stream).
    related_request_id: RequestId | None = None
    #: Told the id our request got, before it is sent (a long-lived request's notifications
    #: name it: a 2026-07-28 subscription's id is its listen request's id).
    on_sent: Callable[[RequestId], object] | None = None


DEFAULT_OPTIONS = CallOptions()


class Inbound:
    """The context of one incoming request: which request it is, and a way back to the
    peer tied to it. Sessions subclass it with their protocol's helpers."""

    __slots__ = (
        "_last_progress",
        "cancelled",
        "meta",
        "method",
        "peer",
        "related_request_id",
        "request_id",
        "task",
    )

    def __init__(
        self,
        peer: JsonRpcPeer,
        request_id: RequestId | None,
        method: str,
        meta: JsonObject | None,
        related_request_id: Hashable | None = None,
    ) -> None:
        self.peer = peer
        self.request_id = request_id
        self.method = method
        self.meta = meta
        #: Set when the peer cancels this request; a handler in a thread can poll it.
        self.cancelled = False
        #: The task running the request (None when it is answered on the spot).
        self.task: asyncio.Task[Any] | None = None
        #: The request of ours whose stream carried this one (a client learns which of its
        #: calls a server request belongs to); None when the transport cannot tell.
        self.related_request_id = related_request_id
        self._last_progress: float | None = None

    @property
    def progress_token(self) -> str | int | None:
        meta = self.meta
        return meta.get("progressToken") if meta else None

    async def report_progress(
        self, progress: float, total: float | None = None, message: str | None = None
    ) -> None:
        """Send notifications/progress if the peer asked for it; progress must increase."""
        token = self.progress_token
        if token is None:
            return
        if self._last_progress is not None and progress <= self._last_progress:
            raise ValueError(f"progress must increase: {progress} after {self._last_progress}")
        self._last_progress = progress
        params: JsonObject = {"progressToken": token, "progress": progress}
        if total is not None:
            params["total"] = total
        if message is not None:
            params["message"] = message
        self.peer.notify(PROGRESS, params, self.request_id)
        await asyncio.sleep(0)  # let the transport flush while a long handler keeps going

    async def request(
        self, method: str, params: JsonObject | None = None, options: CallOptions | None = None
    ) -> JsonObject:
        """Send a request to the peer on behalf of this one."""
        options = options or DEFAULT_OPTIONS
        if options.related_request_id is None and self.request_id is not None:
            options = _with_related(options, self.request_id)
        return await self.peer.request(method, params, options)

    def notify(self, method: str, params: JsonObject | None = None) -> None:
        self.peer.notify(method, params, self.request_id)


#: A handler of an incoming request. Concurrent handlers take (peer, params, ctx) and return
#: an awaitable, or Ready(result) when they could answer without waiting; inline handlers
#: take (peer, params, None), return the result and must never wait.
Handler = Callable[[Any, JsonObject, Any], Any]


@dataclass(frozen=True, slots=True)
class MethodEntry:
    handler: Handler
    #: Answered on the spot: no task, never held up by a slow call.
    inline: bool = False
    #: The context class for requests this entry serves (default: the peer's own).
    context_class: type[Inbound] | None = None


MethodTable = dict[str, MethodEntry]

#: Picks, for a peer that serves two protocol eras, the entry serving a request of the
#: other era: called with (method, the request's `_meta` or None) for every request, it
#: returns that entry, or None to leave the request to the method table.
Claim = Callable[[str, JsonObject | None], MethodEntry | None]

if sys.version_info >= (3, 12):

    def _start_task(work: Coroutine[Any, Any, None]) -> asyncio.Task[None]:
        """Run the request's first step now, inside its own task: a handler that never
        waits is answered without a trip through the event loop."""
        return asyncio.Task(work, loop=asyncio.get_running_loop(), eager_start=True)

else:  # 3.11 has no eager tasks; running the first step outside a task would break
    # asyncio.timeout() and current_task() in handlers, so every request gets a scheduled task.

    def _start_task(work: Coroutine[Any, Any, None]) -> asyncio.Task[None]:
        return asyncio.get_running_loop().create_task(work)


class _Pending:
    __slots__ = ("future", "method", "on_progress")

    def __init__(self, future: asyncio.Future[JsonObject], method: str, on_progress: Any) -> None:
        self.future = future
        self.method = method
        self.on_progress = on_progress


class _Batch:
    """Collects the answers to one batch and sends them as one array, tagged with the
    batch's origin; tells the transport when the batch ends with nothing to send."""

    __slots__ = ("origin", "peer", "pending", "responses")

    def __init__(self, peer: JsonRpcPeer, origin: Hashable | None, size: int) -> None:
        self.peer = peer
        self.origin = origin
        self.pending = size
        self.responses: list[JsonObject] = []

    def add(self, response: JsonObject | None) -> None:
        if response is not None:
            self.responses.append(response)
        self.pending -= 1
        if self.pending == 0:
            if self.responses:
                self.peer.send(self.responses, self.origin)
            else:
                self.peer.nothing_to_send(self.origin)


class JsonRpcPeer:
    """One end of a JSON-RPC connection. Subclasses set `methods` (and may override
    `fallback`, `handle_notification`, the error factories and `batch_refusal`).

    Guarantees: every incoming request with a usable id is answered exactly once unless
    the peer cancels it; notifications (and `"id": null` messages, seed 003's
    notifications) are never answered; a malformed message costs at most its own answer;
    answers to our requests that cannot be read fail that request, never the reader.
    """

    #: Incoming methods; a method not here goes to `fallback`.
    methods: MethodTable = {}
    #: The context class built for each incoming request.
    context_class: type[Inbound] = Inbound
    #: Refuse messages without `"jsonrpc": "2.0"` (servers do; a client may take what a
    #: lenient server sends: Codex's app-server leaves the member out).
    strict_version = True
    #: Requests served by another entry than `methods` (a dual-era MCP server's
    #: per-request choice); it runs for every request, so it must not allocate.
    claim: Claim | None = None
    #: Our request ids step by this much from `id_origin` (see `number_ids`): replicas
    #: sharing one session each mint ids of their own residue, so an answer names the
    #: replica whose request waits for it. 1 (every integer) for a lone process.
    id_stride = 1

    def __init__(self, outbound: Outbound) -> None:
        self.outbound = outbound
        self.closed = False
        self._in_flight: dict[RequestId, Inbound] = {}
        self._outgoing: dict[RequestId, _Pending] = {}
        self._next_id = 0
        self._background: set[asyncio.Task[Any]] = set()

    def number_ids(self, origin: int, stride: int) -> None:
        """Mint our request ids as `origin + k * stride` (k = 1, 2, ...): the id of each
        request of ours then says `origin` (`id % stride`). Call before the first request."""
        if not 0 <= origin < stride:
            raise ValueError("origin must be in [0, stride)")
        self._next_id = origin
        self.id_stride = stride

    # -- input -----------------------------------------------------------------
    def receive_bytes(self, data: bytes | bytearray | memoryview, origin: Hashable = None) -> bool:
        """Decode one JSON text and handle it; malformed JSON gets a -32700 answer."""
        try:
            message = jsonrpc.decode(data)
        except JsonRpcError as exc:
            self.send(error_response(None, exc.code, exc.message), origin)
            return True
        return self.receive(message, origin)

    def receive(self, message: Any, origin: Hashable = None) -> bool:
        """Handle one decoded JSON value: a message or a batch. `origin` is the transport's
        name for where it came from; answers that cannot be tied to a request id (to an
        invalid message, a batch) are sent with it. Returns whether anything will be sent
        in answer (a response tagged with the request's id, or an answer tagged `origin`)."""
        if type(message) is dict:
            return self._receive_one(message, None, origin)
        if type(message) is list:
            return self._receive_batch(message, origin)
        self.send(
            error_response(None, INVALID_REQUEST, "Invalid Request: not a JSON object"), origin
        )
        return True

    def _receive_batch(self, messages: list[Any], origin: Hashable) -> bool:
        refusal = "empty batch" if not messages else self.batch_refusal()
        if refusal is not None:
            self.send(error_response(None, INVALID_REQUEST, f"Invalid Request: {refusal}"), origin)
            return True
        batch = _Batch(self, origin, len(messages))
        answered = False
        for message in messages:
            if type(message) is dict:
                answered |= self._receive_one(message, batch, origin)
            else:
                answered = True
                batch.add(error_response(None, INVALID_REQUEST, "Invalid Request: not an object"))
        return answered

    def _receive_one(self, message: JsonObject, batch: _Batch | None, origin: Hashable) -> bool:
        """Returns whether an answer will be sent."""
        method = message.get("method")
        request_id: Any = message.get("id")
        has_id = request_id is not None  # "id": null is seed 003's notification
        if method is None:
            if "id" in message and ("result" in message or "error" in message):
                self._on_response(message)
                return self._reply(None, None, batch)
            return self._reply(request_id, _invalid(request_id, "missing 'method'"), batch, origin)
        if message.get("jsonrpc") != "2.0" and self.strict_version:
            reply = _invalid(request_id, "'jsonrpc' must be \"2.0\"") if has_id else None
            return self._reply(request_id, reply, batch, origin)
        if type(method) is not str:
            return self._reply(
                request_id, _invalid(request_id, "'method' must be a string"), batch, origin
            )
        params = message.get("params")
        if not has_id:
            if params is None or type(params) is dict:
                self._on_notification(method, params or {}, origin)
            return self._reply(None, None, batch)
        if not is_valid_id(request_id):
            return self._reply(
                None, _invalid(None, "'id' must be a string or an integer"), batch, origin
            )
        if params is None:
            params = {}
        elif type(params) is not dict:
            error = error_response(request_id, INVALID_PARAMS, "Invalid params: must be an object")
            return self._reply(request_id, error, batch)
        if request_id in self._in_flight:
            error = _invalid(request_id, f"request id {request_id!r} is already in flight")
            return self._reply(request_id, error, batch)
        self._start_request(request_id, method, params, batch, origin)
        return True

    def _start_request(
        self,
        request_id: RequestId,
        method: str,
        params: JsonObject,
        batch: _Batch | None,
        origin: Hashable,
    ) -> None:
        meta = params.get("_meta")
        if type(meta) is not dict:
            meta = None
        claim = self.claim
        claimed = claim(method, meta) if claim is not None else None
        if claimed is not None:
            handler = claimed.handler
            context_class = claimed.context_class or self.context_class
        else:
            entry = self.methods.get(method)
            if entry is not None and entry.inline:
                try:
                    result = entry.handler(self, params, None)
                except JsonRpcError as exc:
                    self._reply(request_id, self.error_response(request_id, exc), batch)
                except Exception as exc:
                    log.error("unhandled error in %s", method, exc_info=exc)
                    self._reply(request_id, _internal_error(request_id, exc), batch)
                else:
                    self._reply(request_id, result_response(request_id, result), batch)
                return
            handler = entry.handler if entry is not None else self.fallback
            context_class = self.context_class
        ctx = context_class(self, request_id, method, meta, origin)
        # A handler checks its params before returning its awaitable, so a bad call is
        # answered here without a task.
        try:
            work = handler(self, params, ctx)
        except JsonRpcError as exc:
            self._reply(request_id, self.error_response(request_id, exc), batch)
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
        self, request_id: RequestId, work: Any, ctx: Inbound, batch: _Batch | None
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
                batch.add(None)  # cancelled by the peer: no answer, but the batch completes
            raise
        except JsonRpcError as exc:
            response = self.error_response(request_id, exc)
        except Exception as exc:
            log.error("unhandled error in %s", ctx.method, exc_info=exc)
            response = _internal_error(request_id, exc)
        else:
            response = result_response(request_id, result)
        if self._in_flight.get(request_id) is ctx:
            del self._in_flight[request_id]
        else:
            response = None  # cancelled by the peer (or the connection closed) after all
        self._reply(request_id, response, batch)

    def _reply(
        self,
        request_id: Any,
        response: JsonObject | None,
        batch: _Batch | None,
        origin: Hashable = None,
    ) -> bool:
        """Send (or collect) one answer; returns whether one goes out. Call sites pass
        `origin` for an answer to a message we do not run (an invalid one): it goes where the
        message came from, since the transport cannot know its id names a request; without
        an origin it is tagged with the id when usable."""
        if batch is not None:
            batch.add(response)
            return response is not None
        if response is None:
            return False
        if origin is None:
            origin = request_id if is_valid_id(request_id) else None
        self.send(response, origin)
        return True

    def _on_notification(self, method: str, params: JsonObject, origin: Hashable) -> None:
        if method == CANCELLED:
            self.cancel_request(params.get("requestId"), params.get("reason"))
        elif method == PROGRESS:
            self._on_progress(params)
        try:
            self.handle_notification(method, params, origin)
        except Exception:
            log.exception("handling notification %s failed", method)

    def _on_progress(self, params: JsonObject) -> None:
        token = response_id(params.get("progressToken"))
        pending = self._outgoing.get(token) if token is not None else None
        if pending is not None and pending.on_progress is not None:
            self._call_back(pending.on_progress, params)

    def cancel_request(self, request_id: Any, reason: Any = None) -> bool:
        """Stop an incoming request and suppress its answer. Unknown ids are ignored."""
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

    def is_in_flight(self, request_id: Any) -> bool:
        return is_valid_id(request_id) and request_id in self._in_flight

    # -- answers to our requests -------------------------------------------------
    def _on_response(self, message: JsonObject) -> None:
        request_id = response_id(message.get("id"))
        pending = self._outgoing.pop(request_id, None) if request_id is not None else None
        if pending is None or pending.future.done():
            if "error" in message and message.get("id") is None:
                log.warning("the peer reported an error: %.300r", message.get("error"))
            else:
                log.debug("answer to unknown request id %.100r ignored", message.get("id"))
            return
        if "error" in message:
            error = error_from_wire(message["error"])
            pending.future.set_exception(
                self.remote_error(error.code, error.message, error.data, pending.method)
            )
            return
        result = message.get("result")
        if type(result) is dict:
            pending.future.set_result(result)
        else:
            pending.future.set_exception(
                self.remote_error(
                    INTERNAL_ERROR,
                    f"malformed answer to {pending.method}: the result is not an object",
                    {"result": result},
                    pending.method,
                )
            )

    # -- output ----------------------------------------------------------------
    def send(self, message: JsonObject | list[JsonObject], related: Hashable = None) -> None:
        if self.closed:
            return
        sent = self.outbound.send(message, related)
        if sent is not None:
            self._spawn(_delivered(sent, message))

    def nothing_to_send(self, origin: Hashable) -> None:
        """A batch ended without a single answer: a transport waiting on `origin` may stop."""
        finish = getattr(self.outbound, "nothing_to_send", None)
        if finish is not None and not self.closed:
            finish(origin)

    def notify(
        self, method: str, params: JsonObject | None = None, related: Hashable = None
    ) -> None:
        self.send(jsonrpc.notification(method, params), related)

    async def request(
        self, method: str, params: JsonObject | None = None, options: CallOptions | None = None
    ) -> JsonObject:
        """Send a request and wait for its result. Raises `remote_error(...)` when the peer
        answers with an error (or an unreadable answer), `timeout_error(...)` after
        `options.timeout`, and `closed_error()` when the connection ends first."""
        if self.closed:
            raise self.closed_error()
        options = options or DEFAULT_OPTIONS
        self._next_id += self.id_stride
        request_id = self._next_id
        if options.on_sent is not None:
            options.on_sent(request_id)
        if options.meta is not None or options.on_progress is not None:
            params = dict(params or {})
            meta = {**(params.get("_meta") or {}), **(options.meta or {})}
            if options.on_progress is not None:
                meta["progressToken"] = request_id
            params["_meta"] = meta
        future: asyncio.Future[JsonObject] = asyncio.get_running_loop().create_future()
        self._outgoing[request_id] = _Pending(future, method, options.on_progress)
        sent = False
        scope = asyncio.timeout(options.timeout)
        try:
            async with scope:
                delivery = self.outbound.send(
                    jsonrpc.request(request_id, method, params), options.related_request_id
                )
                sent = True
                if delivery is not None:
                    await delivery
                return await future
        except TimeoutError:
            if not scope.expired():
                raise
            self._abandon(
                request_id, method, options, sent, f"timed out after {options.timeout:g} s"
            )
            raise self.timeout_error(method, options.timeout or 0.0) from None
        except asyncio.CancelledError:
            self._abandon(request_id, method, options, sent, "cancelled by the caller")
            raise
        finally:
            self._outgoing.pop(request_id, None)
            if not future.done():
                future.cancel()

    def _abandon(
        self, request_id: int, method: str, options: CallOptions, sent: bool, reason: str
    ) -> None:
        # The spec forbids cancelling initialize; a closed connection has nobody to tell.
        if not sent or not options.cancel_on_abandon or method == "initialize" or self.closed:
            return
        self.notify(
            CANCELLED, {"requestId": request_id, "reason": reason}, options.related_request_id
        )

    # -- hooks for the session above ----------------------------------------------
    def fallback(self, peer: Any, params: JsonObject, ctx: Inbound) -> Any:
        """Handles methods not in `methods`."""
        raise JsonRpcError(METHOD_NOT_FOUND, f"Method not found: {ctx.method}")

    def handle_notification(self, method: str, params: JsonObject, origin: Hashable) -> None:
        """Called with every notification, after cancellation and progress are applied."""

    def batch_refusal(self) -> str | None:
        """Why batches are refused now (the answer's message), or None to accept them."""
        return None

    def error_response(self, request_id: RequestId, exc: JsonRpcError) -> JsonObject:
        """The answer to a request whose handler raised `exc` (a transport that maps
        errors to statuses of its own may look at the exception here)."""
        return _error_from(request_id, exc)

    def remote_error(self, code: int, message: str, data: Any, method: str) -> Exception:
        """The exception our request raises when the peer answers with an error."""
        return JsonRpcError(code, message, data)

    def closed_error(self) -> Exception:
        return JsonRpcError(INTERNAL_ERROR, "connection closed")

    def timeout_error(self, method: str, timeout: float) -> Exception:
        return TimeoutError(f"{method}: no answer within {timeout:g} s")

    # -- lifetime --------------------------------------------------------------
    @property
    def in_flight(self) -> int:
        return len(self._in_flight)

    @property
    def outgoing(self) -> int:
        return len(self._outgoing)

    async def drain(self, timeout: float) -> None:
        """Let incoming requests finish (bounded), then cancel what is left."""
        tasks = [ctx.task for ctx in self._in_flight.values() if ctx.task is not None]
        if tasks:
            _, pending = await asyncio.wait(tasks, timeout=timeout)
            for task in pending:
                task.cancel()
            if pending:
                await asyncio.wait(pending, timeout=1.0)

    def close(self, error: Exception | None = None) -> None:
        """Stop everything: incoming requests are cancelled (unanswered), our pending
        requests fail at once with `error` (default: `closed_error()`)."""
        if self.closed:
            return
        self.closed = True
        for ctx in self._in_flight.values():
            ctx.cancelled = True
            if ctx.task is not None:
                ctx.task.cancel()
        self._in_flight.clear()
        pending = list(self._outgoing.values())
        self._outgoing.clear()
        for item in pending:
            if not item.future.done():
                item.future.set_exception(error or self.closed_error())
        for task in list(self._background):
            task.cancel()

    def _spawn(self, work: Awaitable[Any]) -> None:
        task = asyncio.ensure_future(work)
        self._background.add(task)
        task.add_done_callback(self._background.discard)

    def _call_back(self, fn: Callable[..., object], *args: Any) -> None:
        """Run a user callback; an async one in the background; a failure is only logged."""
        try:
            result = fn(*args)
            if inspect.isawaitable(result):
                self._spawn(_logged(result, fn))
        except Exception:
            log.exception("callback %r failed", fn)


async def _delivered(sent: Awaitable[None], message: Any) -> None:
    try:
        await sent
    except Exception as exc:  # an answer or notification nobody waits on: log it
        what = message.get("method", "answer") if isinstance(message, dict) else "batch"
        log.debug("could not deliver %s: %s", what, exc)


async def _logged(result: Awaitable[Any], fn: Any) -> None:
    try:
        await result
    except Exception:
        log.exception("callback %r failed", fn)


def _with_related(options: CallOptions, related: RequestId) -> CallOptions:
    return dataclasses.replace(options, related_request_id=related)


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


__all__ = [
    "DEFAULT_OPTIONS",
    "CallOptions",
    "Claim",
    "Handler",
    "Inbound",
    "JsonRpcPeer",
    "MethodEntry",
    "MethodTable",
    "Outbound",
    "ProgressCallback",
]
