"""Streamable HTTP (MCP 2025-03-26 and later) on one endpoint: POST, GET and DELETE /mcp.

A POST carrying a request is answered with JSON when the call sends nothing but
its result. When it sends notifications or server-to-client requests first and
the client accepts SSE, the answer turns into an SSE stream that carries them
as they happen, then the result. `X-MCP-POST-STREAM: 1` asks for SSE from the
start. A message is never put on two streams.
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any

from aiohttp import web

from ...core import jsonrpc
from ...core.jsonrpc import JsonObject
from ...core.versions import DEFAULT_HTTP_VERSION, V2025_11_25, allows_batches, is_supported
from . import sse
from .config import HttpConfig
from .exchange import accepts, is_client_response, is_notification, is_request, jsonrpc_error
from .modern import ModernHttp, is_modern_post, method_not_allowed, speaks_modern
from .security import credential_of
from .sessions import HttpSession, SessionManager, SessionRefused
from .streams import CLOSE, TICK, Stream, Ticker

SESSION_HEADER = "Mcp-Session-Id"
VERSION_HEADER = "MCP-Protocol-Version"


class StreamableHttp:
    def __init__(self, manager: SessionManager, config: HttpConfig) -> None:
        self.manager = manager
        self.config = config
        self.modern = ModernHttp(manager.core, config.keepalive_interval)

    # -- POST ------------------------------------------------------------------
    async def post(self, request: web.Request) -> web.StreamResponse:
        credential = credential_of(request)
        content_type = request.headers.get("Content-Type", "application/json")
        if content_type.split(";")[0].strip().lower() != "application/json":
            return jsonrpc_error(
                415, f"Unsupported Content-Type {content_type!r}: use application/json"
            )
        if not (accepts(request, "application/json") or accepts(request, "text/event-stream")):
            return jsonrpc_error(
                406, "Not Acceptable: accept application/json and/or text/event-stream"
            )
        try:
            body = await request.read()
        except web.HTTPRequestEntityTooLarge:
            return jsonrpc_error(413, f"Request body over {self.config.max_body_bytes} bytes")
        try:
            message = jsonrpc.decode(body)
        except jsonrpc.JsonRpcError as exc:
            return jsonrpc_error(400, exc.message, code=jsonrpc.PARSE_ERROR)

        if is_modern_post(message, request.headers.get(VERSION_HEADER)):
            return await self.modern.post(request, message, credential)
        if self.config.stateless:
            return await self._stateless(request, message)
        initializing = type(message) is dict and message.get("method") == "initialize"
        session_id = request.headers.get(SESSION_HEADER)
        if initializing and not session_id:
            try:
                session = self.manager.create(credential)
            except SessionRefused as exc:
                return jsonrpc_error(503, str(exc), code=-32000)
        else:
            found = self._find_session(request, session_id, credential)
            if isinstance(found, web.Response):
                return found
            session = found
            version_error = _check_version_header(request)
            if version_error is not None:
                return version_error
        session.busy += 1
        session.touch()
        try:
            if type(message) is list:
                return await self._batch(request, session, message)
            if type(message) is not dict:
                return jsonrpc_error(400, "Invalid Request: expected a JSON object")
            return await self._one(request, session, message)
        finally:
            session.busy -= 1
            session.touch()

    def _find_session(
        self, request: web.Request, session_id: str | None, credential: str | None
    ) -> HttpSession | web.Response:
        if not session_id:
            return jsonrpc_error(
                400, f"Bad Request: missing {SESSION_HEADER} header (initialize first)"
            )
        session = self.manager.get(session_id)
        # A session is bound to the credential that created it; to anyone else it does not exist.
        if session is None or session.credential != credential:
            return jsonrpc_error(404, "Session not found: initialize a new session", code=-32001)
        return session

    async def _one(
        self, request: web.Request, session: HttpSession, message: JsonObject
    ) -> web.StreamResponse:
        headers = {SESSION_HEADER: session.id} if session.id else {}
        if is_request(message):
            if message["id"] in session.by_request:
                return jsonrpc_error(
                    409,
                    f"request id {message['id']!r} is already in flight",
                    request_id=message["id"],
                    headers=headers,
                )
            wants_sse = accepts(request, "text/event-stream") and not session.json_only
            force_sse = request.headers.get("X-MCP-POST-STREAM") == "1" or not accepts(
                request, "application/json"
            )
            stream = session.open_request_stream(message["id"], sse=wants_sse or force_sse)
            queue = session.streams.attach(stream)
            session.core_session.receive(message)
            return await self._answer(request, session, stream, queue, force_sse, headers)
        if is_notification(message) or is_client_response(message):
            session.core_session.receive(message)
            return web.Response(status=202, headers=headers)
        return jsonrpc_error(
            400,
            "Invalid Request: not a JSON-RPC request, notification or response",
            headers=headers,
        )

    async def _answer(
        self,
        request: web.Request,
        session: HttpSession,
        stream: Stream,
        queue: asyncio.Queue[tuple[str, bytes] | None],
        force_sse: bool,
        headers: dict[str, str],
    ) -> web.StreamResponse:
        # A call that stays silent past the keepalive interval turns its answer into SSE
        # and sends keepalive comments, so a proxy's read timeout (nginx: 60 s) never
        # cuts a long call. A JSON-only client gets its one JSON answer whenever it comes.
        ticker = Ticker(queue, self.config.keepalive_interval) if stream.sse else None
        response: web.StreamResponse | None = None
        try:
            first = await queue.get()
            while first is TICK:
                if response is None:
                    response = await self._open_sse(request, session, stream, headers)
                await response.write(sse.KEEPALIVE)
                first = await queue.get()
            if first is None and response is None:
                if not session.core_session.closed:
                    # Cancelled by the client: no response, and no event ever comes.
                    return _nothing_to_answer(request, headers)
                return jsonrpc_error(
                    404, "Session ended while the request was running", code=-32001, headers=headers
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
            if first is not None and first is not CLOSE:
                session.streams.keep(stream, first[0], first[1])  # before the stream is replayable
            if response is None:
                response = await self._open_sse(request, session, stream, headers)
            item = first
            while item is not None and item is not CLOSE:
                if item is TICK:
                    await response.write(sse.KEEPALIVE)
                else:
                    await response.write(sse.event(item[1], item[0]))
                item = await queue.get()
            with contextlib.suppress(ConnectionError):
                await response.write_eof()
            return response
        except (ConnectionError, asyncio.CancelledError):
            # The client went away: the call keeps running and its events stay resumable.
            session.log.debug("client left stream %s", stream.key)
            raise
        finally:
            if ticker is not None:
                ticker.cancel()
            session.streams.detach(stream, queue)

    async def _open_sse(
        self, request: web.Request, session: HttpSession, stream: Stream, headers: dict[str, str]
    ) -> web.StreamResponse:
        response = web.StreamResponse(headers={**sse.SSE_HEADERS, **headers})
        await response.prepare(request)
        stream.replayable = True
        if (session.core_session.protocol_version or "") >= V2025_11_25:
            # Priming event: an id to resume from before anything else (SEP-1699).
            await response.write(sse.retry_hint(1000, f"{stream.key}_0"))
        return response

    async def _batch(
        self, request: web.Request, session: HttpSession, messages: list[Any]
    ) -> web.StreamResponse:
        headers = {SESSION_HEADER: session.id} if session.id else {}
        version = session.core_session.protocol_version
        if not allows_batches(version):
            return jsonrpc_error(
                400,
                f"Invalid Request: JSON-RPC batches are not supported by protocol version {version}",
                headers=headers,
            )
        waits = []
        for message in messages:
            if (
                type(message) is dict
                and is_request(message)
                and message["id"] not in session.by_request
            ):
                stream = session.open_request_stream(message["id"], sse=False)
                waits.append((stream, session.streams.attach(stream)))
                session.core_session.receive(message)
            elif type(message) is dict and (
                is_notification(message) or is_client_response(message)
            ):
                session.core_session.receive(message)
        if not waits:
            return web.Response(status=202, headers=headers)
        bodies = []
        for stream, queue in waits:
            item = await queue.get()
            session.streams.detach(stream, queue)
            if item is not None:
                bodies.append(item[1])
        return web.Response(
            body=b"[" + b",".join(bodies) + b"]", content_type="application/json", headers=headers
        )

    async def _stateless(self, request: web.Request, message: Any) -> web.StreamResponse:
        if type(message) is not dict:
            return jsonrpc_error(
                400, "Invalid Request: stateless mode takes one JSON object per request"
            )
        version_error = _check_version_header(request)
        if version_error is not None:
            return version_error
        session = self.manager.ephemeral(request.headers.get(VERSION_HEADER, DEFAULT_HTTP_VERSION))
        try:
            return await self._one(request, session, message)
        finally:
            session.close()

    # -- GET -------------------------------------------------------------------
    async def get(self, request: web.Request) -> web.StreamResponse:
        credential = credential_of(request)
        if speaks_modern(request):
            return method_not_allowed()
        if self.config.stateless:
            return jsonrpc_error(405, "Method Not Allowed: stateless mode has no standalone stream")
        if not accepts(request, "text/event-stream"):
            return jsonrpc_error(
                406, "Not Acceptable: GET opens an SSE stream; accept text/event-stream"
            )
        found = self._find_session(request, request.headers.get(SESSION_HEADER), credential)
        if isinstance(found, web.Response):
            return found
        session = found
        streams = session.streams
        last_event_id = request.headers.get("Last-Event-ID")
        resumed = streams.resume(last_event_id) if last_event_id else None
        stream, missed = resumed if resumed is not None else (streams.standalone, [])
        if stream is streams.standalone and stream.queue is not None and resumed is None:
            return jsonrpc_error(409, "Conflict: this session already has an open GET stream")
        queue = streams.attach(stream)
        ticker: Ticker | None = None
        session.busy += 1
        response = web.StreamResponse(headers={**sse.SSE_HEADERS, SESSION_HEADER: session.id or ""})
        try:
            await response.prepare(request)
            if (session.core_session.protocol_version or "") >= V2025_11_25 and not missed:
                await response.write(sse.retry_hint(1000, f"{stream.key}_{stream.seq}"))
            for event_id, data in missed:
                await response.write(sse.event(data, event_id))
            if stream.finished and stream is not streams.standalone:
                return response
            ticker = Ticker(queue, self.config.keepalive_interval)
            while (item := await queue.get()) is not None:
                if item is TICK:
                    await response.write(sse.KEEPALIVE)  # also finds out if the client left
                else:
                    await response.write(sse.event(item[1], item[0]))
        except (ConnectionError, asyncio.CancelledError):
            session.log.debug("GET stream closed by the client")
        finally:
            if ticker is not None:
                ticker.cancel()
            streams.detach(stream, queue)
            session.busy -= 1
            session.touch()
        return response

    # -- DELETE ----------------------------------------------------------------
    async def delete(self, request: web.Request) -> web.StreamResponse:
        credential = credential_of(request)
        if speaks_modern(request):
            return method_not_allowed()
        if self.config.stateless:
            return jsonrpc_error(405, "Method Not Allowed: stateless mode has no sessions")
        found = self._find_session(request, request.headers.get(SESSION_HEADER), credential)
        if isinstance(found, web.Response):
            return found
        assert found.id is not None
        self.manager.end(found.id, "deleted by the client")
        return web.Response(status=200)


def _nothing_to_answer(request: web.Request, headers: dict[str, str]) -> web.Response:
    """An exchange that ends without a message: an empty SSE stream, or 202 for JSON-only."""
    if accepts(request, "text/event-stream"):
        return web.Response(headers={**sse.SSE_HEADERS, **headers})
    return web.Response(status=202, headers=headers)


def _check_version_header(request: web.Request) -> web.Response | None:
    version = request.headers.get(VERSION_HEADER)
    if version is not None and not is_supported(version):
        return jsonrpc_error(400, f"Bad Request: unsupported {VERSION_HEADER}: {version}")
    return None
