"""GET /mcp/sse?request=<url-encoded JSON-RPC>: one `message` event with the answer, then close,
for a caller that can only GET (an EventSource, a URL in a browser). With an Mcp-Session-Id
the request runs in that session, else in a throwaway one (specs/http.md, "Sessions"); a
notification gets a stream with no event."""

from __future__ import annotations

import contextlib

from aiohttp import web

from ...core import jsonrpc
from ...core.errors import McpError
from ...core.jsonrpc import JsonObject
from ...core.versions import DEFAULT_HTTP_VERSION
from . import sse
from .admission import Admission
from .errors import Busy, busy_response, error_response
from .exchange import (
    SESSION_HEADER,
    VERSION_HEADER,
    is_notification,
    is_request,
    locate_session,
    unsupported_version,
)
from .manager import SessionManager
from .security import credential_of
from .sessions import HttpSession


class SingleEventSse:
    def __init__(self, manager: SessionManager, admission: Admission) -> None:
        self.manager = manager
        self.admission = admission

    async def get(self, request: web.Request) -> web.StreamResponse:
        raw = request.query.get("request")
        if raw is None:
            return error_response(400, "Bad Request: pass the JSON-RPC message in ?request=")
        try:
            message = jsonrpc.decode(raw)
        except McpError as exc:
            return error_response(400, exc.message, jsonrpc.PARSE_ERROR)
        if type(message) is not dict or not (is_request(message) or is_notification(message)):
            return error_response(
                400, "Invalid Request: expected one JSON-RPC request or notification"
            )
        denied = self.admission.message(request, message)  # a GET is a way in like a POST
        if denied is not None:
            return denied
        request_id = message.get("id")
        session_id = request.headers.get(SESSION_HEADER)
        if session_id:
            found = await locate_session(self.manager, request, session_id)
            if isinstance(found, web.Response):
                return found
            with found as session:
                return await self._serve(request, session, message)
        version_error = unsupported_version(request)
        if version_error is not None:
            return version_error
        try:
            session = self.manager.ephemeral(
                request.headers.get(VERSION_HEADER, DEFAULT_HTTP_VERSION), credential_of(request)
            )
        except Busy as exc:
            return busy_response(exc.status, str(exc), request_id)
        try:
            return await self._serve(request, session, message)
        finally:
            self.manager.discard(session)

    async def _serve(
        self, request: web.Request, session: HttpSession, message: JsonObject
    ) -> web.StreamResponse:
        response = web.StreamResponse(headers=sse.SSE_HEADERS)
        if is_notification(message):
            session.core_session.receive(message)
            await response.prepare(request)
            return response
        request_id = message["id"]
        if request_id in session.by_request:
            return error_response(409, "request id already in flight", request_id=request_id)
        try:
            session.check_room()
        except Busy as exc:
            return busy_response(exc.status, str(exc), request_id)
        stream = session.open_request_stream(request_id, sse=False)
        queue = session.streams.attach(stream)
        try:
            session.core_session.receive(message)
            item = await queue.get()
        finally:
            session.streams.detach(stream, queue)
        await response.prepare(request)
        if item is not None:
            with contextlib.suppress(ConnectionError):
                await response.write(sse.event(item[1]))
        return response
