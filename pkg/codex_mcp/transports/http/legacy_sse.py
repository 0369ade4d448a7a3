"""The HTTP+SSE transport of MCP 2024-11-05, for older clients.

GET /sse opens a stream whose first `endpoint` event names the URL to POST
messages to; POSTs are answered 202 and every response travels on the stream.
The session lives as long as the stream.
"""

from __future__ import annotations

import asyncio
import contextlib

from aiohttp import web

from . import sse
from .config import HttpConfig
from .exchange import accepts, jsonrpc_error
from .security import credential_of
from .sessions import SessionManager, SessionRefused
from .streams import TICK, Ticker


class LegacySse:
    def __init__(self, manager: SessionManager, config: HttpConfig) -> None:
        self.manager = manager
        self.config = config

    async def stream(self, request: web.Request) -> web.StreamResponse:
        credential = credential_of(request)
        if not accepts(request, "text/event-stream"):
            return jsonrpc_error(406, "Not Acceptable: accept text/event-stream")
        try:
            session = self.manager.create(credential)
        except SessionRefused as exc:
            return jsonrpc_error(503, str(exc), code=-32000)
        assert session.id is not None
        session.busy += 1
        queue = session.streams.attach(session.streams.standalone)
        ticker = Ticker(queue, self.config.keepalive_interval)
        response = web.StreamResponse(headers=sse.SSE_HEADERS)
        try:
            await response.prepare(request)
            endpoint = f"{self.config.prefix}/messages?session_id={session.id}"
            await response.write(sse.event(endpoint.encode(), name="endpoint"))
            while (item := await queue.get()) is not None:
                if item is TICK:
                    await response.write(sse.KEEPALIVE)
                else:
                    await response.write(sse.event(item[1]))
        except (ConnectionError, asyncio.CancelledError):
            pass
        finally:
            ticker.cancel()
            session.busy -= 1
            self.manager.end(session.id, "legacy SSE stream closed")
        with contextlib.suppress(ConnectionError):
            await response.write_eof()
        return response

    async def post(self, request: web.Request) -> web.StreamResponse:
        credential = credential_of(request)
        session = self.manager.get(request.query.get("session_id", ""))
        if session is None or session.credential != credential:
            return jsonrpc_error(404, "Session not found", code=-32001)
        try:
            body = await request.read()
        except web.HTTPRequestEntityTooLarge:
            return jsonrpc_error(413, f"Request body over {self.config.max_body_bytes} bytes")
        session.touch()
        # Parse errors are answered on the stream, like every other answer.
        session.core_session.receive_bytes(body)
        return web.Response(status=202, text="Accepted")
