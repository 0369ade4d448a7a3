"""HTTP sessions: one core ServerSession each, plus routing of what it sends.

The session manager is separate from the transport handlers: it issues ids,
enforces the cap, evicts idle sessions, and keeps sessions from ever seeing
each other's messages (each has its own streams and in-flight requests).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import secrets
import time
from collections.abc import Hashable
from typing import Any

import orjson

from ...core.jsonrpc import JsonObject, RequestId, is_valid_id
from ...core.server import ServerCore
from ...core.session import ServerSession
from .streams import CLOSE, Stream, StreamSet

log = logging.getLogger("codex_mcp.http")


class SessionRefused(Exception):
    """No new session now (503); the message says why, for the client's log."""


class SessionLog(logging.LoggerAdapter[logging.Logger]):
    """Puts the session id on every line about a session."""

    def process(self, msg: Any, kwargs: Any) -> tuple[Any, Any]:
        return f"[session {self.extra['session'] if self.extra else '-'}] {msg}", kwargs


class HttpSession:
    """A core session reachable over HTTP. Also its own Outbound."""

    def __init__(
        self,
        core: ServerCore,
        session_id: str | None,
        replay_events: int,
        credential: str | None = None,
        json_only: bool = False,
    ) -> None:
        self.id = session_id
        self.credential = credential
        self.json_only = json_only
        self.streams = StreamSet(replay_events)
        self.by_request: dict[Hashable, Stream] = {}
        self.last_seen = time.monotonic()
        self.busy = 0  # open HTTP exchanges; a busy session is never evicted
        self.log = SessionLog(log, {"session": session_id or "-"})
        self.core_session: ServerSession = core.open_session(self, session_id)
        self.core_session.on_client_notification = self._on_client_notification

    # Outbound ------------------------------------------------------------------
    def send(self, message: JsonObject | list[JsonObject], related: Hashable = None) -> None:
        related_request_id = related
        data = orjson.dumps(message)
        stream = self.by_request.get(related_request_id) if related_request_id is not None else None
        is_final = (
            stream is not None
            and type(message) is dict
            and message.get("id") == related_request_id
            and ("result" in message or "error" in message)
        )
        if stream is not None and not is_final and not stream.sse:
            stream = None  # a JSON-only exchange can't carry notifications: use the GET stream
        if stream is None:
            stream = self.streams.standalone
        self.streams.push(stream, data)
        if is_final:
            del self.by_request[related_request_id]
            self.streams.finish(stream)

    # Exchanges -----------------------------------------------------------------
    def open_request_stream(self, request_id: RequestId, sse: bool) -> Stream:
        stream = self.streams.open(sse)
        self.by_request[request_id] = stream
        return stream

    def close_request_stream(self, request_id: RequestId) -> None:
        """End the response stream of a running request early (SSE polling, SEP-1699):
        its later events stay in the replay buffer until the client resumes with
        Last-Event-ID on GET."""
        stream = self.by_request.get(request_id)
        if stream is None:
            return
        stream.sse = True
        stream.replayable = True
        if stream.queue is not None:
            stream.queue.put_nowait(CLOSE)
            stream.queue = None

    def _on_client_notification(self, method: str, params: JsonObject) -> None:
        if method == "notifications/cancelled":
            self.end_request(params.get("requestId"))

    def end_request(self, request_id: Any) -> None:
        """The client cancelled a request: it gets no response (the spec says so), so end
        its exchange now rather than leave the POST waiting and the id in flight."""
        stream = self.by_request.pop(request_id, None) if is_valid_id(request_id) else None
        if stream is not None:
            self.streams.finish(stream)

    def touch(self) -> None:
        self.last_seen = time.monotonic()

    def close(self) -> None:
        self.core_session.close()
        self.streams.close_all()


class SessionManager:
    def __init__(
        self,
        core: ServerCore,
        *,
        ttl: float,
        max_sessions: int,
        replay_events: int,
        json_only: bool,
    ) -> None:
        self.core = core
        self.ttl = ttl
        self.max_sessions = max_sessions
        self.replay_events = replay_events
        self.json_only = json_only
        self.sessions: dict[str, HttpSession] = {}
        self.closing = False
        self._reaper: asyncio.Task[None] | None = None

    def create(self, credential: str | None) -> HttpSession:
        if self.closing:
            # Keep-alive connections outlive the listening socket: refuse them new work.
            raise SessionRefused("Server shutting down; try another instance or later")
        if len(self.sessions) >= self.max_sessions:
            self.evict_idle()
            if len(self.sessions) >= self.max_sessions:
                raise SessionRefused(
                    f"Too many sessions: the server already has {self.max_sessions}; "
                    "try again later"
                )
        session_id = secrets.token_urlsafe(24)  # 192 bits, visible ASCII
        session = HttpSession(self.core, session_id, self.replay_events, credential, self.json_only)
        self.sessions[session_id] = session
        session.log.info("session opened (%d live)", len(self.sessions))
        return session

    def ephemeral(self, protocol_version: str | None) -> HttpSession:
        """A session for one self-contained request (stateless mode, single-event SSE)."""
        session = HttpSession(self.core, None, 0, None, json_only=False)
        session.core_session.protocol_version = protocol_version
        session.core_session.initialized = True
        return session

    def get(self, session_id: str) -> HttpSession | None:
        return self.sessions.get(session_id)

    def end(self, session_id: str, reason: str) -> bool:
        session = self.sessions.pop(session_id, None)
        if session is None:
            return False
        session.close()
        session.log.info("session ended: %s (%d live)", reason, len(self.sessions))
        return True

    def evict_idle(self) -> int:
        cutoff = time.monotonic() - self.ttl
        stale = [sid for sid, s in self.sessions.items() if s.last_seen < cutoff and s.busy == 0]
        for sid in stale:
            self.end(sid, "idle")
        return len(stale)

    def start(self) -> None:
        if self._reaper is None:
            self._reaper = asyncio.get_running_loop().create_task(self._reap())

    async def _reap(self) -> None:
        interval = max(0.05, min(self.ttl / 4, 30.0))
        while True:
            await asyncio.sleep(interval)
            self.evict_idle()

    async def shutdown(self, timeout: float) -> None:
        """Refuse new sessions, let in-flight calls finish (bounded), then end every session."""
        self.closing = True
        if self._reaper is not None:
            self._reaper.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._reaper
        sessions = list(self.sessions.values())
        if sessions:
            await asyncio.gather(*(s.core_session.drain(timeout) for s in sessions))
        for sid in list(self.sessions):
            self.end(sid, "server shutting down")

    def stats(self) -> dict[str, Any]:
        return {"sessions": len(self.sessions), "max_sessions": self.max_sessions}
