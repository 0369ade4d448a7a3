"""Streamable HTTP for 2026-07-28 requests: one POST, one self-contained exchange
(specs/http.md, "2026-07-28 requests on the same endpoint")."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Hashable
from typing import Any

import orjson
from aiohttp import web

from ...core.errors import McpError
from ...core.jsonrpc import METHOD_NOT_FOUND, JsonObject
from ...core.request_meta import is_stateless
from ...core.routing_headers import HeaderMismatch, check_standard_headers
from ...core.server import ServerCore
from ...core.session import StatelessSession
from ...core.tasks import TASK_METHODS
from ...core.versions import STATELESS_VERSIONS
from ..backpressure import LAGGING, MessageQueue, SlowReaders, compact
from . import sse
from .errors import Busy, busy_response, error_response
from .exchange import VERSION_HEADER, is_request
from .manager import SessionManager
from .streams import TICK, Ticker, wait

log = logging.getLogger("codex_mcp.http")

#: (the encoded message, whether it is the request's final answer)
_Item = tuple[bytes, bool]


def is_stateless_post(message: Any, version_header: str | None) -> bool:
    """Whether a decoded POST body is a 2026-07-28 message (see request_meta.is_stateless)."""
    return type(message) is dict and is_stateless(message, protocol_version_header=version_header)


def speaks_stateless(request: web.Request) -> bool:
    """A GET or DELETE from a stateless client (which has neither: 405)."""
    return request.headers.get(VERSION_HEADER, "").strip() in STATELESS_VERSIONS


def method_not_allowed() -> web.Response:
    return error_response(
        405,
        "Method Not Allowed: 2026-07-28 clients only POST (subscriptions/listen replaces "
        "the GET stream; there is no session to DELETE)",
        headers={"Allow": "POST"},
    )


class _Exchange:
    """The core's outbound for one stateless POST: everything goes to its response, and
    what waits for a lagging reader is bounded (backpressure.py)."""

    __slots__ = ("bound", "queue", "slow_readers")

    def __init__(self, bound: int, slow_readers: SlowReaders | None = None) -> None:
        self.bound = bound
        self.slow_readers = slow_readers
        self.queue: MessageQueue[_Item | tuple[str, bytes]] = MessageQueue()

    def send(self, message: JsonObject | list[JsonObject], related: Hashable = None) -> None:
        final = type(message) is dict and "method" not in message
        data = orjson.dumps(message)
        queue = self.queue
        if queue.bytes > LAGGING:  # it waits a while: worth its own allocation
            data = compact(data)
        queue.put_nowait((data, final))
        if queue.bytes > self.bound:
            queue.shed(self.bound, self.slow_readers)


class StatelessHttp:
    def __init__(self, manager: SessionManager, keepalive_interval: float) -> None:
        self.core: ServerCore = manager.core
        #: Stateless calls count against the server-wide cap of calls in flight (there is
        #: no session to hold a share), and none start while shutting down.
        self.manager = manager
        self.keepalive_interval = keepalive_interval

    async def post(
        self, request: web.Request, message: JsonObject, credential: str | None
    ) -> web.StreamResponse:
        if not is_request(message):
            # The revision defines no client notifications over HTTP (closing a stream
            # is the cancellation); accept and drop them, and stray responses too.
            return web.Response(status=202)
        request_id = message["id"]
        try:
            check_standard_headers(request.headers, message)
        except HeaderMismatch as exc:
            return error_response(400, exc.message, exc.code, request_id)
        capacity = self.manager.capacity
        if self.manager.closing:
            return busy_response(
                503, "Server shutting down; try another instance or later", request_id
            )
        method = message.get("method")
        if method == "subscriptions/listen":
            # Not a call (it waits, it does not work), but it holds a connection as long
            # as a session's GET stream: it counts against max_sessions.
            try:
                self.manager.start_listening()
            except Busy as exc:
                return busy_response(exc.status, str(exc), request_id)
            try:
                return await self._exchange(request, message, credential)
            finally:
                self.manager.stop_listening()
        # Following a task (get, update, cancel) is never refused: it is how a client
        # whose tasks fill the cap frees room.
        if method not in TASK_METHODS and capacity.running() >= capacity.max_inflight:
            return busy_response(
                503,
                f"Too many calls in flight on this server (at most {capacity.max_inflight}); "
                "try again later",
                request_id,
            )
        capacity.inflight += 1
        try:
            return await self._exchange(request, message, credential)
        finally:
            capacity.inflight -= 1

    async def _exchange(
        self, request: web.Request, message: JsonObject, credential: str | None
    ) -> web.StreamResponse:
        request_id = message["id"]
        exchange = _Exchange(self.manager.send_buffer_bytes, self.manager.slow_readers)
        peer = self.core.open_stateless(
            exchange, principal=credential, routing_headers=request.headers
        )
        try:
            with self.manager.serving(peer):
                peer.receive(message)
                return await self._answer(request, exchange, peer)
        except (ConnectionError, asyncio.CancelledError):
            log.debug("client closed the stream of request %r: cancelled", request_id)
            raise
        finally:
            peer.close()  # a request still running (the client left) is cancelled

    async def _answer(
        self, request: web.Request, exchange: _Exchange, peer: StatelessSession
    ) -> web.StreamResponse:
        queue = exchange.queue
        # The timer starts when the reader first waits: an answer ready at once has none.
        ticker = Ticker(queue, self.keepalive_interval, armed=False)
        response: web.StreamResponse | None = None
        try:
            item = queue.get_nowait() if not queue.empty() else await wait(queue, ticker)
            while True:
                if item is TICK:
                    # A silent call: answer with SSE now and keep the proxy from timing out.
                    if response is None:
                        response = await self._open_sse(request)
                    await response.write(sse.KEEPALIVE)
                elif response is None and item[1] is True:
                    return web.Response(
                        body=item[0],
                        status=_status_of(peer.error),
                        content_type="application/json",
                    )
                else:
                    if response is None:
                        response = await self._open_sse(request)
                    await response.write(sse.event(item[0]))  # type: ignore[arg-type]
                    if item[1] is True:
                        break
                item = await wait(queue, ticker)
            with contextlib.suppress(ConnectionError):
                await response.write_eof()
            return response
        finally:
            ticker.cancel()

    @staticmethod
    async def _open_sse(request: web.Request) -> web.StreamResponse:
        response = web.StreamResponse(headers=sse.SSE_HEADERS)
        await response.prepare(request)
        return response


def _status_of(error: McpError | None) -> int:
    """200 for a result; for an error, the status the revision gives it: 400 for a
    rejected envelope, header or capability (they say so), 404 for an unknown method."""
    if error is None:
        return 200
    status = getattr(error, "http_status", None)
    if isinstance(status, int):
        return status
    return 404 if error.code == METHOD_NOT_FOUND else 200


__all__ = ["StatelessHttp", "is_stateless_post", "method_not_allowed", "speaks_stateless"]
