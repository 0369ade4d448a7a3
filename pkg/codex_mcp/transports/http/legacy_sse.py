"""The HTTP+SSE transport of MCP 2024-11-05, for older clients: GET /sse, then POSTs answered
202 whose responses travel on the stream; the session lives as long as the stream."""

from __future__ import annotations

import asyncio
import contextlib

from aiohttp import web

from ...core import jsonrpc
from ...core.errors import McpError
from . import sse
from .admission import Admission
from .config import HttpConfig
from .errors import Busy, busy_response, error_response
from .exchange import accepts_sse, find_session, read_body
from .manager import SessionManager
from .oauth import GRANT_KEY
from .security import credential_of
from .streams import TICK, Ticker


class LegacySse:
    def __init__(self, manager: SessionManager, config: HttpConfig, admission: Admission) -> None:
        self.manager = manager
        self.config = config
        self.admission = admission

    async def stream(self, request: web.Request) -> web.StreamResponse:
        if not accepts_sse(request):
            return error_response(406, "Not Acceptable: accept text/event-stream")
        try:
            # It lives as long as this process's stream: never shared with other replicas
            # (behind a balancer, route its POSTs by session_id: deploy/nginx/).
            session = self.manager.create(credential_of(request), shared=False)
        except Busy as exc:
            return busy_response(exc.status, str(exc))
        assert session.id is not None
        session.streams.standalone.replayable = False  # 2024-11-05 has no event ids to resume
        queue = session.streams.attach(session.streams.standalone)
        ticker = Ticker(queue, self.config.keepalive_interval)
        response = web.StreamResponse(headers=sse.SSE_HEADERS)
        try:
            with session:
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
            self.manager.end(session.id, "legacy SSE stream closed")
        with contextlib.suppress(ConnectionError):
            await response.write_eof()
        return response

    async def post(self, request: web.Request) -> web.StreamResponse:
        found = find_session(
            self.manager, request, request.query.get("session_id"), "the session_id parameter"
        )
        if isinstance(found, web.Response):
            return found
        body = await read_body(request, self.config.max_body_bytes)
        if isinstance(body, web.Response):
            return body
        denied = self._admit(request, body)
        if denied is not None:
            return denied
        with found as session:
            try:
                session.check_room()
            except Busy as exc:
                return busy_response(exc.status, str(exc))
            # Every answer, parse errors included, travels on the stream.
            session.core_session.receive_bytes(body)
        return web.Response(status=202, text="Accepted")

    def _admit(self, request: web.Request, body: bytes) -> web.Response | None:
        """The message's admission (its tools' scopes), as on every entry. Parsed only for
        an OAuth caller, whose scopes depend on it; a body that does not parse is left to
        the core, which answers it on the stream."""
        if request.get(GRANT_KEY) is None:
            return None
        try:
            message = jsonrpc.decode(body)
        except McpError:
            return None
        return self.admission.message(request, message)
