"""GET /mcp/sse?request=<url-encoded JSON-RPC>: one `message` event with the answer, then close.

For callers that can only make GET requests (seed 003's design). A notification
gets a stream with no event. With an Mcp-Session-Id header the request runs in
that session; otherwise in a throwaway one.
"""

from __future__ import annotations

import contextlib

from aiohttp import web

from ...core import jsonrpc
from ...core.versions import DEFAULT_HTTP_VERSION
from . import sse
from .exchange import is_notification, is_request, jsonrpc_error
from .security import credential_of
from .sessions import HttpSession, SessionManager
from .streamable import SESSION_HEADER, VERSION_HEADER


class SingleEventSse:
    def __init__(self, manager: SessionManager) -> None:
        self.manager = manager

    async def get(self, request: web.Request) -> web.StreamResponse:
        credential = credential_of(request)
        raw = request.query.get("request")
        if raw is None:
            return jsonrpc_error(400, "Bad Request: pass the JSON-RPC message in ?request=")
        try:
            message = jsonrpc.decode(raw)
        except jsonrpc.JsonRpcError as exc:
            return jsonrpc_error(400, exc.message, code=jsonrpc.PARSE_ERROR)
        if type(message) is not dict or not (is_request(message) or is_notification(message)):
            return jsonrpc_error(
                400, "Invalid Request: expected one JSON-RPC request or notification"
            )

        session_id = request.headers.get(SESSION_HEADER)
        ephemeral = not session_id
        session: HttpSession | None
        if ephemeral:
            session = self.manager.ephemeral(
                request.headers.get(VERSION_HEADER, DEFAULT_HTTP_VERSION)
            )
        else:
            session = self.manager.get(session_id or "")
            if session is None or session.credential != credential:
                return jsonrpc_error(
                    404, "Session not found: initialize a new session", code=-32001
                )
        response = web.StreamResponse(headers=sse.SSE_HEADERS)
        try:
            if is_notification(message):
                session.core_session.receive(message)
                await response.prepare(request)
                return response
            if message["id"] in session.by_request:
                return jsonrpc_error(409, "request id already in flight", request_id=message["id"])
            stream = session.open_request_stream(message["id"], sse=False)
            queue = session.streams.attach(stream)
            session.busy += 1
            try:
                session.core_session.receive(message)
                item = await queue.get()
            finally:
                session.busy -= 1
                session.streams.detach(stream, queue)
            await response.prepare(request)
            if item is not None:
                with contextlib.suppress(ConnectionError):
                    await response.write(sse.event(item[1]))
            return response
        finally:
            if ephemeral:
                session.close()
