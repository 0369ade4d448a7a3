"""Streamable HTTP (MCP 2025-03-26 and later) on one endpoint: POST, GET and DELETE /mcp
(JSON or SSE per POST: specs/http.md, "Choosing JSON or SSE for a POST")."""

from __future__ import annotations

import asyncio
import contextlib
from functools import partial
from typing import Any

from aiohttp import web

from ...core import jsonrpc
from ...core.errors import McpError
from ...core.jsonrpc import JsonObject, RequestId
from ...core.versions import DEFAULT_HTTP_VERSION, V2025_11_25
from . import sse
from .admission import Admission
from .config import HttpConfig
from .connections import when_read
from .errors import SESSION_NOT_FOUND, Busy, busy_response, error_body, error_response
from .exchange import (
    SESSION_HEADER,
    VERSION_HEADER,
    accepted,
    accepts_sse,
    is_request,
    locate_session,
    read_body,
    unsupported_version,
)
from .manager import SessionManager
from .security import credential_of
from .sessions import Exchange, HttpSession
from .shared_stream import follow_stream, is_local
from .stateless import StatelessHttp, is_stateless_post, method_not_allowed, speaks_stateless
from .streams import CLOSE, TICK, Stream, Ticker, parse_event_id, wait

#: What a request still running when its session ends is answered (-32001, SESSION_NOT_FOUND).
SESSION_ENDED = "Session ended while the request was running"
SEND_JSON = (
    "send the body with Content-Type: application/json "
    "(curl: --json '{...}', or -H 'Content-Type: application/json' -d '{...}')"
)


class StreamableHttp:
    def __init__(self, manager: SessionManager, config: HttpConfig, admission: Admission) -> None:
        self.manager = manager
        self.config = config
        self.admission = admission
        # 2026-07-28 requests: self-contained exchanges beside the sessions (stateless.py).
        self.stateless = StatelessHttp(manager, config.keepalive_interval)

    # -- POST ------------------------------------------------------------------
    async def post(self, request: web.Request) -> web.StreamResponse:
        content_type = request.headers.get("Content-Type", "application/json")
        if content_type.split(";")[0].strip().lower() != "application/json":
            # Not form types either: a web page may POST those cross-site without a
            # preflight (specs/decisions.md, "form posts"); say what to send instead.
            return error_response(415, f"Unsupported Content-Type {content_type!r}: {SEND_JSON}")
        admits_json, admits_sse = accepted(request)  # the header parsed once per request
        if not (admits_json or admits_sse):
            return error_response(
                406, "Not Acceptable: accept application/json and/or text/event-stream"
            )
        body = await read_body(request, self.config.max_body_bytes)
        if isinstance(body, web.Response):
            return body
        try:
            message = jsonrpc.decode(body)
        except McpError as exc:
            return error_response(400, exc.message, jsonrpc.PARSE_ERROR)
        denied = self.admission.message(request, message)
        if denied is not None:
            return denied

        if is_stateless_post(message, request.headers.get(VERSION_HEADER)):
            return await self.stateless.post(request, message, credential_of(request))
        if self.config.stateless:
            return await self._stateless(request, message, admits_json, admits_sse)
        initializing = type(message) is dict and message.get("method") == "initialize"
        session_id = request.headers.get(SESSION_HEADER)
        if initializing and not session_id:
            try:
                session = self.manager.create(credential_of(request))
            except Busy as exc:
                return busy_response(exc.status, str(exc), _id_of(message))
        else:
            # This process's session, or (replicas) one another replica created.
            found = await locate_session(self.manager, request, session_id)
            if isinstance(found, web.Response):
                return found
            session = found
            version_error = unsupported_version(request)
            if version_error is not None:
                return version_error
            if session.store is not None and type(message) is dict and _routed(session, message):
                return web.Response(status=202, headers={SESSION_HEADER: session_id or ""})
        with session:
            if type(message) is dict and is_request(message):
                return await self._one(request, session, message, admits_json, admits_sse)
            return await self._through_core(request, session, message)

    async def _one(
        self,
        request: web.Request,
        session: HttpSession,
        message: JsonObject,
        admits_json: bool,
        admits_sse: bool,
    ) -> web.StreamResponse:
        """One request with a usable id: answered on its own stream, JSON or SSE."""
        headers = {SESSION_HEADER: session.id} if session.id else {}
        if message["id"] in session.by_request:
            return error_response(
                409,
                f"request id {message['id']!r} is already in flight",
                request_id=message["id"],
                headers=headers,
            )
        try:
            session.check_room()
        except Busy as exc:
            return busy_response(exc.status, str(exc), message["id"], headers)
        wants_sse = admits_sse and not session.json_only and not self._to_get_stream(session)
        force_sse = not admits_json or request.headers.get("X-MCP-POST-STREAM") == "1"
        stream = session.open_request_stream(message["id"], sse=wants_sse or force_sse)
        queue = session.streams.attach(stream)
        session.core_session.receive(message)
        return await self._answer(
            request, session, message["id"], stream, queue, force_sse, headers
        )

    def _to_get_stream(self, session: HttpSession) -> bool:
        """The Rust codex-mcp-server's streaming (`--post-stream header`): while the session
        holds its GET stream, a POST answers with JSON and what its call sends first goes to
        that stream, unless the POST asks with X-MCP-POST-STREAM: 1. (With no GET stream to
        carry them, a call's messages still upgrade its answer to SSE rather than wait
        unread.)"""
        return self.config.post_stream == "header" and session.streams.standalone.queue is not None

    async def _answer(
        self,
        request: web.Request,
        session: HttpSession,
        request_id: RequestId,
        stream: Stream,
        queue: asyncio.Queue[tuple[str, bytes] | None],
        force_sse: bool,
        headers: dict[str, str],
    ) -> web.StreamResponse:
        # A call that stays silent past the keepalive interval turns its answer into SSE
        # and sends keepalive comments, so a proxy's read timeout (nginx: 60 s) never
        # cuts a long call. A JSON-only client gets its one JSON answer whenever it comes.
        # The timer starts when the reader first waits: an answer ready at once has none.
        ticker = Ticker(queue, self.config.keepalive_interval, armed=False) if stream.sse else None
        response: web.StreamResponse | None = None
        try:
            first = queue.get_nowait() if not queue.empty() else await wait(queue, ticker)
            while first is TICK:
                if response is None:
                    response = await self._open_sse(request, session, stream, headers, request_id)
                await response.write(sse.KEEPALIVE)
                first = await queue.get()
            if session.unflushed:
                await session.flush()  # the next request may reach another replica
            if first is None and response is None:
                if not session.core_session.closed:
                    # Cancelled by the client: no response, and no event ever comes.
                    return _nothing_to_answer(request, headers)
                return error_response(
                    404, SESSION_ENDED, SESSION_NOT_FOUND, request_id=request_id, headers=headers
                )
            if (
                response is None
                and first is not None
                and first is not CLOSE
                and stream.finished
                and queue.qsize() == 1
                and not force_sse
            ):
                # The result came with nothing before it: a plain JSON answer.
                return web.Response(body=first[1], content_type="application/json", headers=headers)
            backlog: list[tuple[str, bytes] | None] = []
            if first is not None and first is not CLOSE:
                # What was pushed before the stream turned replayable is kept too, so a
                # client that loses the stream can resume from any of its events.
                while not queue.empty():
                    backlog.append(queue.get_nowait())
                events = [e for e in (first, *backlog) if e is not None and e[0]]
                session.streams.keep(stream, events, stream.finished)
            if response is None:
                response = await self._open_sse(request, session, stream, headers, request_id)
            item = first
            while item is not None and item is not CLOSE:
                if item is TICK:
                    await response.write(sse.KEEPALIVE)
                else:
                    await response.write(sse.event(item[1], item[0]))
                item = backlog.pop(0) if backlog else await wait(queue, ticker)
            carried_end = item is None and stream.finished and stream.queue is queue
            if item is None:
                await _end_unanswered(response, session, stream)
            with contextlib.suppress(ConnectionError):
                await response.write_eof()
            if carried_end:  # its events are kept until the client has read it
                when_read(request, partial(session.streams.forget, stream))
            return response
        except (ConnectionError, asyncio.CancelledError):
            # The client went away: by default the call keeps running and its events stay
            # resumable; with on_hangup="cancel" (serving codex) it is cancelled, as if asked.
            session.log.debug("client left stream %s", stream.key)
            if self.config.on_hangup == "cancel" and not stream.finished:
                session.core_session.cancel_request(request_id, "the client hung up")
                session.end_request(request_id)
            raise
        finally:
            if ticker is not None:
                ticker.cancel()
            session.streams.detach(stream, queue)

    async def _open_sse(
        self,
        request: web.Request,
        session: HttpSession,
        stream: Stream,
        headers: dict[str, str],
        request_id: RequestId,
    ) -> web.StreamResponse:
        response = web.StreamResponse(headers={**sse.SSE_HEADERS, **headers})
        await response.prepare(request)
        stream.replayable = True
        session.opened_sse(stream, request_id)
        if (session.core_session.protocol_version or "") >= V2025_11_25:
            # Priming event: an id to resume from before anything else (SEP-1699).
            await response.write(sse.retry_hint(1000, f"{stream.key}_0"))
        return response

    async def _through_core(
        self, request: web.Request, session: HttpSession, message: Any
    ) -> web.StreamResponse:
        """Anything but one request with a usable id: a notification, a response to one of
        our requests, a batch, or a message the core refuses. The core decides (the same
        code as stdio); its one answer, if any, comes back tagged with this exchange."""
        headers = {SESSION_HEADER: session.id} if session.id else {}
        calls = (
            sum(type(m) is dict and is_request(m) for m in message) if type(message) is list else 0
        )
        try:
            if calls:
                session.check_room(calls)
        except Busy as exc:
            return busy_response(exc.status, str(exc), headers=headers)
        exchange = Exchange(calls)
        stream = session.open_exchange(exchange)
        queue = session.streams.attach(stream)
        try:
            if not session.core_session.receive(message, exchange):
                session.nothing_to_send(exchange)
                if session.unflushed:
                    await session.flush()
                return web.Response(status=202, headers=headers)
            item = await queue.get()
        finally:
            session.streams.detach(stream, queue)
        if item is None or item is CLOSE or item is TICK:
            if session.core_session.closed:
                return error_response(
                    404,
                    "Session ended while the batch was running",
                    SESSION_NOT_FOUND,
                    headers=headers,
                )
            return web.Response(status=202, headers=headers)
        # A batch's answers are an array (200); a lone error about the message itself is 400.
        status = 200 if item[1][:1] == b"[" else 400
        return web.Response(
            body=item[1], status=status, content_type="application/json", headers=headers
        )

    async def _stateless(
        self, request: web.Request, message: Any, admits_json: bool, admits_sse: bool
    ) -> web.StreamResponse:
        if type(message) is not dict:
            return error_response(
                400, "Invalid Request: stateless mode takes one JSON object per request"
            )
        version_error = unsupported_version(request)
        if version_error is not None:
            return version_error
        try:
            session = self.manager.ephemeral(
                request.headers.get(VERSION_HEADER, DEFAULT_HTTP_VERSION), credential_of(request)
            )
        except Busy as exc:
            return busy_response(exc.status, str(exc), _id_of(message))
        try:
            if is_request(message):
                return await self._one(request, session, message, admits_json, admits_sse)
            return await self._through_core(request, session, message)
        finally:
            self.manager.discard(session)

    # -- GET -------------------------------------------------------------------
    async def get(self, request: web.Request) -> web.StreamResponse:
        if speaks_stateless(request):
            return method_not_allowed()
        if self.config.stateless:
            return error_response(
                405, "Method Not Allowed: stateless mode has no standalone stream"
            )
        if not accepts_sse(request):
            return error_response(
                406, "Not Acceptable: GET opens an SSE stream; accept text/event-stream"
            )
        last_event_id = request.headers.get("Last-Event-ID")
        resume_from = parse_event_id(last_event_id) if last_event_id else None
        if last_event_id and resume_from is None:
            return error_response(400, f"Bad Request: malformed Last-Event-ID {last_event_id!r}")
        found = await locate_session(self.manager, request, request.headers.get(SESSION_HEADER))
        if isinstance(found, web.Response):
            return found
        with found as session:
            if session.store is not None and not is_local(session, resume_from):
                return await follow_stream(request, session, resume_from, self.config)
            return await self._local_stream(request, session, resume_from)

    async def _local_stream(
        self, request: web.Request, session: HttpSession, resume_from: tuple[str, int] | None
    ) -> web.StreamResponse:
        """The GET stream from this process's own streams and replay buffer."""
        streams = session.streams
        resumed = streams.resume(*resume_from) if resume_from is not None else None
        stream, missed = resumed if resumed is not None else (streams.standalone, [])
        if stream is streams.standalone and stream.queue is not None and resumed is None:
            return error_response(409, "Conflict: this session already has an open GET stream")
        queue = streams.attach(stream)
        ticker: Ticker | None = None
        response = web.StreamResponse(headers={**sse.SSE_HEADERS, SESSION_HEADER: session.id or ""})
        try:
            await response.prepare(request)
            if (session.core_session.protocol_version or "") >= V2025_11_25 and not missed:
                await response.write(sse.retry_hint(1000, f"{stream.key}_{stream.seq}"))
            for event_id, data in missed:
                await response.write(sse.event(data, event_id))
            if not stream.finished or stream is streams.standalone:
                ticker = Ticker(queue, self.config.keepalive_interval)
                while (item := await queue.get()) is not None:
                    if item is TICK:
                        await response.write(sse.KEEPALIVE)  # also finds out if the client left
                    else:
                        await response.write(sse.event(item[1], item[0]))
                await _end_unanswered(response, session, stream)
            if stream.finished and stream.queue is queue and stream is not streams.standalone:
                await response.write_eof()  # the resumed stream's end
                when_read(request, partial(streams.forget, stream))
        except (ConnectionError, asyncio.CancelledError):
            session.log.debug("GET stream closed by the client")
        finally:
            if ticker is not None:
                ticker.cancel()
            streams.detach(stream, queue)
        return response

    # -- DELETE ----------------------------------------------------------------
    async def delete(self, request: web.Request) -> web.StreamResponse:
        if speaks_stateless(request):
            return method_not_allowed()
        if self.config.stateless:
            return error_response(405, "Method Not Allowed: stateless mode has no sessions")
        found = await locate_session(self.manager, request, request.headers.get(SESSION_HEADER))
        if isinstance(found, web.Response):
            return found
        await self.manager.delete(found)
        return web.Response(status=200)


async def _end_unanswered(
    response: web.StreamResponse, session: HttpSession, stream: Stream
) -> None:
    """A request's stream ended by its session ending (a DELETE, here or on another replica)
    while the call ran: its answer will never come, so the stream's last event is an error
    for its id. Nothing for the GET stream, a finished call, or a reader replaced by a newer
    one (the session lives on)."""
    if stream.request_id is not None and not stream.finished and session.core_session.closed:
        ended = error_body(SESSION_ENDED, SESSION_NOT_FOUND, stream.request_id)
        await response.write(sse.event(ended))


def _nothing_to_answer(request: web.Request, headers: dict[str, str]) -> web.Response:
    """An exchange that ends without a message: an empty SSE stream, or 202 for JSON-only."""
    if accepts_sse(request):
        return web.Response(headers={**sse.SSE_HEADERS, **headers})
    return web.Response(status=202, headers=headers)


def _routed(session: HttpSession, message: JsonObject) -> bool:
    """Sessions shared by replicas: pass on what belongs to another replica. An answer to
    one of our requests goes to the replica whose request it is (its id says which); a
    cancellation goes to every replica (only the one running the request acts on it).
    True when the message was handled by passing it on."""
    store = session.store
    assert store is not None and session.id is not None
    method = message.get("method")
    if method is None and ("result" in message or "error" in message):
        # Our ids are integers; a client may send one back as a string (response_id).
        number = jsonrpc.response_id(message.get("id"))
        if type(number) is int and number % store.stride != store.node:
            store.send_to(number % store.stride, session.id, message)
            return True
    elif method == "notifications/cancelled":
        params = message.get("params")
        if type(params) is dict:
            store.broadcast_cancel(session.id, params.get("requestId"))
    return False


def _id_of(message: JsonObject) -> Any:
    """The id to put on an error about this message: its own when valid, else null."""
    return message["id"] if is_request(message) else None
