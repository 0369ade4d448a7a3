"""Our requests to the other side of a JSON-RPC connection: ids, answers, timeouts, progress
(`Requester`, the half of `JsonRpcPeer` that asks; specs/design.md, "The peer")."""

from __future__ import annotations

import asyncio
import functools
import logging
from collections.abc import Callable
from typing import Any, Protocol

from . import jsonrpc
from .calls import (
    CANCELLED,
    DEFAULT_OPTIONS,
    AnswerCallback,
    CallOptions,
    Outbound,
    ProgressCallback,
)
from .errors import McpError
from .jsonrpc import INTERNAL_ERROR, JsonObject, RequestId, error_from_wire, response_id

log = logging.getLogger("codex_mcp.peer")


class Waiter(Protocol):
    """What waits for the answer to one of our requests: `succeed` or `fail` is called
    once (unless it is `settled` already, or abandoned). `request_for` takes one of the
    caller's own, so a relayed call is its own waiter: no object more per call."""

    method: str
    on_progress: ProgressCallback | None

    @property
    def settled(self) -> bool: ...

    def succeed(self, result: JsonObject) -> None: ...

    def fail(self, error: Exception) -> None: ...


class _Pending:
    """One request of ours awaiting its answer: in a future (`request`), or for a callback
    (`request_nowait`)."""

    __slots__ = ("future", "method", "on_answer", "on_progress", "sent")

    def __init__(
        self,
        future: asyncio.Future[JsonObject] | None,
        method: str,
        on_progress: Any,
        on_answer: AnswerCallback | None = None,
    ) -> None:
        self.future = future
        self.method = method
        self.on_progress = on_progress
        self.on_answer = on_answer
        self.sent = False

    @property
    def settled(self) -> bool:
        return self.future is not None and self.future.done()

    def succeed(self, result: JsonObject) -> None:
        if self.future is not None:
            if not self.future.done():
                self.future.set_result(result)
        elif self.on_answer is not None:
            self.on_answer(result, None)

    def fail(self, error: Exception) -> None:
        if self.future is not None:
            if not self.future.done():
                self.future.set_exception(error)
        elif self.on_answer is not None:
            self.on_answer(None, error)


class Requester:
    """Sending requests and correlating their answers. Mixed into `JsonRpcPeer`, which
    gives it `outbound`, `closed`, `notify`, `_spawn` and `_call_back`."""

    outbound: Outbound
    closed: bool
    notify: Callable[..., None]
    _spawn: Callable[..., None]
    _call_back: Callable[..., None]

    #: Our request ids step by this much (see `number_ids`): replicas sharing one session
    #: each mint ids of their own residue, so an answer names the replica whose request
    #: waits for it. 1 (every integer) for a lone process.
    id_stride = 1

    def __init__(self) -> None:
        self._outgoing: dict[RequestId, Waiter] = {}
        self._next_id = 0

    @property
    def log_extra(self) -> dict[str, str] | None:
        """`extra=` for a line about this peer: a server session's names the session
        (log_names), computed when a line is logged; None for a peer serving no session."""
        return None

    def number_ids(self, origin: int, stride: int) -> None:
        """Mint our request ids as `origin + k * stride` (k = 1, 2, ...): the id of each
        request of ours then says `origin` (`id % stride`). Call before the first request."""
        if not 0 <= origin < stride:
            raise ValueError("origin must be in [0, stride)")
        self._next_id = origin
        self.id_stride = stride

    # -- sending -----------------------------------------------------------------
    async def request(
        self, method: str, params: JsonObject | None = None, options: CallOptions | None = None
    ) -> JsonObject:
        """Send a request and wait for its result. Raises `remote_error(...)` when the peer
        answers with an error (or an unreadable answer), `timeout_error(...)` after
        `options.timeout`, and `closed_error()` when the connection ends first."""
        if self.closed:
            raise self.closed_error()
        options = options or DEFAULT_OPTIONS
        request_id, params = self._prepare(params, options)
        future: asyncio.Future[JsonObject] = asyncio.get_running_loop().create_future()
        pending = _Pending(future, method, options.on_progress)
        self._outgoing[request_id] = pending
        try:
            if options.timeout is None:  # no scope to enter and leave
                return await self._exchange(request_id, params, options, pending)
            scope = asyncio.timeout(options.timeout)
            try:
                async with scope:
                    return await self._exchange(request_id, params, options, pending)
            except TimeoutError:
                if not scope.expired():
                    raise
                reason = f"timed out after {options.timeout:g} s"
                self._abandon(request_id, pending, options, reason)
                raise self.timeout_error(method, options.timeout) from None
        except asyncio.CancelledError:
            self._abandon(request_id, pending, options, "cancelled by the caller")
            raise
        finally:
            self._outgoing.pop(request_id, None)
            if not future.done():
                future.cancel()

    async def _exchange(
        self,
        request_id: RequestId,
        params: JsonObject | None,
        options: CallOptions,
        pending: _Pending,
    ) -> JsonObject:
        delivery = self.outbound.send(
            jsonrpc.request(request_id, pending.method, params), options.related_request_id
        )
        pending.sent = True
        if delivery is not None:
            await delivery
        assert pending.future is not None
        return await pending.future

    def request_nowait(
        self,
        method: str,
        params: JsonObject | None,
        on_answer: AnswerCallback,
        options: CallOptions | None = None,
    ) -> RequestId:
        """Send a request now; `on_answer(result, error)` is called once, when its answer
        arrives (error: as `request` would raise) or the connection closes. No future, no
        task, no timeout. `abandon(request_id)` gives up on it."""
        progress = options.on_progress if options is not None else None
        return self.request_for(_Pending(None, method, progress, on_answer), params, options)

    def request_for(
        self, waiter: Waiter, params: JsonObject | None, options: CallOptions | None = None
    ) -> RequestId:
        """Send the request `waiter.method` now; its answer goes to `waiter` (`succeed` or
        `fail`, once), as does the connection's end. A relay's hot path: no future, no
        task, no timeout, and the waiter is the caller's own object. `abandon(request_id)`
        gives up on it; `options.on_progress` should be the waiter's `on_progress`."""
        if self.closed:
            raise self.closed_error()
        if options is None:  # a fresh id, the params as they are
            self._next_id += self.id_stride
            request_id: RequestId = self._next_id
            related = None
        else:
            request_id, params = self._prepare(params, options)
            related = options.related_request_id
        self._outgoing[request_id] = waiter
        message: JsonObject = {"jsonrpc": "2.0", "id": request_id, "method": waiter.method}
        if params is not None:  # jsonrpc.request, inline: a relay's every call comes here
            message["params"] = params
        try:
            delivery = self.outbound.send(message, related)
        except BaseException:
            del self._outgoing[request_id]
            raise
        if delivery is not None:  # an outbound that writes later: its failure fails the request
            self._spawn(delivery, functools.partial(self._undelivered, request_id))
        return request_id

    def _prepare(
        self, params: JsonObject | None, options: CallOptions
    ) -> tuple[RequestId, JsonObject | None]:
        """The request's id (the caller's, or the next one), and its params with the
        `_meta` the options ask for."""
        request_id = options.request_id
        if request_id is None:
            self._next_id += self.id_stride
            request_id = self._next_id
        if options.meta is not None or options.on_progress is not None:
            params = dict(params or {})
            meta = {**(params.get("_meta") or {}), **(options.meta or {})}
            if options.on_progress is not None:
                meta["progressToken"] = request_id
            params["_meta"] = meta
        return request_id, params

    def new_request_id(self) -> int:
        """An id no request of ours uses yet, for CallOptions.request_id."""
        self._next_id += self.id_stride
        return self._next_id

    def abandon(self, request_id: RequestId, reason: str = "cancelled by the caller") -> None:
        """Give up on a request of ours still waiting: the peer is told, its answer ignored."""
        if self._outgoing.pop(request_id, None) is not None and not self.closed:
            self.notify(CANCELLED, {"requestId": request_id, "reason": reason})

    def _abandon(
        self, request_id: RequestId, pending: _Pending, options: CallOptions, reason: str
    ) -> None:
        # The spec forbids cancelling initialize; a closed connection has nobody to tell.
        if (
            not pending.sent
            or not options.cancel_on_abandon
            or pending.method == "initialize"
            or self.closed
        ):
            return
        self.notify(
            CANCELLED, {"requestId": request_id, "reason": reason}, options.related_request_id
        )

    def _undelivered(self, request_id: RequestId, exc: Exception) -> None:
        pending = self._outgoing.pop(request_id, None)
        if pending is not None:
            pending.fail(exc)

    # -- answers -------------------------------------------------------------------
    def _on_response(self, message: JsonObject) -> None:
        request_id = response_id(message.get("id"))
        pending = self._outgoing.pop(request_id, None) if request_id is not None else None
        if pending is None or pending.settled:
            if "error" in message and message.get("id") is None:
                log.warning(
                    "the peer reported an error: %.300r",
                    message.get("error"),
                    extra=self.log_extra,
                )
            else:
                log.debug("answer to unknown request id %.100r ignored", message.get("id"))
            return
        if "error" in message:
            error = error_from_wire(message["error"])
            pending.fail(self.remote_error(error.code, error.message, error.data, pending.method))
            return
        result = message.get("result")
        if type(result) is dict:
            pending.succeed(result)
        else:
            pending.fail(
                self.remote_error(
                    INTERNAL_ERROR,
                    f"malformed answer to {pending.method}: the result is not an object",
                    {"result": result},
                    pending.method,
                )
            )

    def _on_progress(self, params: JsonObject) -> None:
        token = response_id(params.get("progressToken"))
        pending = self._outgoing.get(token) if token is not None else None
        if pending is not None and pending.on_progress is not None:
            self._call_back(pending.on_progress, params)

    def _fail_pending(self, error: Exception) -> None:
        """The connection closed: every request still waiting fails with `error`, at once."""
        pending = list(self._outgoing.values())
        self._outgoing.clear()
        for item in pending:
            item.fail(error)

    @property
    def outgoing(self) -> int:
        return len(self._outgoing)

    # -- the errors our requests raise (sessions override them) ----------------------
    def remote_error(self, code: int, message: str, data: Any, method: str) -> Exception:
        """The exception our request raises when the peer answers with an error."""
        return McpError(code, message, data, method)

    def closed_error(self) -> Exception:
        return McpError(INTERNAL_ERROR, "connection closed")

    def timeout_error(self, method: str, timeout: float) -> Exception:
        return TimeoutError(f"{method}: no answer within {timeout:g} s")


__all__ = ["Requester", "Waiter"]
