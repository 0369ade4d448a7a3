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


class Refused(Exception):
    """No room now: `status` is 429 when the session's own calls fill its share, 503 when
    the server is full (sessions, calls) or shutting down. The message says which cap."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


class Capacity:
    """Calls in flight across every session of a manager, against the caps."""

    __slots__ = ("inflight", "max_inflight", "max_session_inflight")

    def __init__(self, max_inflight: int, max_session_inflight: int) -> None:
        self.inflight = 0
        self.max_inflight = max_inflight
        self.max_session_inflight = max_session_inflight


class Exchange:
    """An HTTP exchange whose answer has no request id of its own to be found by: a batch,
    or a message the core answers with an error (the core tags that answer with it).
    `calls` is how many requests it carries, counted against the caps while it runs."""

    __slots__ = ("calls",)

    def __init__(self, calls: int) -> None:
        self.calls = calls


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
        capacity: Capacity,
        credential: str | None = None,
        json_only: bool = False,
    ) -> None:
        self.id = session_id
        self.capacity = capacity
        self.credential = credential
        self.json_only = json_only
        self.streams = StreamSet(replay_events)
        self.by_request: dict[Hashable, Stream] = {}
        self.last_seen = time.monotonic()
        self.busy = 0  # open HTTP exchanges (see __enter__); a busy session is never evicted
        self.log = SessionLog(log, {"session": session_id or "-"})
        self.core_session: ServerSession = core.open_session(self, session_id)
        self.core_session.on_client_notification = self._on_client_notification

    # Outbound ------------------------------------------------------------------
    def send(self, message: JsonObject | list[JsonObject], related: Hashable = None) -> None:
        data = orjson.dumps(message)
        stream = self.by_request.get(related) if related is not None else None
        is_final = stream is not None and (
            type(related) is Exchange  # the core tags only an exchange's one answer with it
            or (
                type(message) is dict
                and message.get("id") == related
                and ("result" in message or "error" in message)
            )
        )
        if stream is not None and not is_final and not stream.sse:
            stream = None  # a JSON-only exchange can't carry notifications: use the GET stream
        if stream is None:
            stream = self.streams.standalone
        self.streams.push(stream, data)
        if is_final:
            self._finish(related)

    def nothing_to_send(self, origin: Hashable) -> None:
        """The core says an exchange ends without an answer (a batch whose every request
        was cancelled): end it, so its POST can answer 202."""
        if origin in self.by_request:
            self._finish(origin)

    def _finish(self, key: Hashable) -> None:
        stream = self.by_request.pop(key)
        self.capacity.inflight -= key.calls if type(key) is Exchange else 1
        self.streams.finish(stream)

    # Exchanges -----------------------------------------------------------------
    def __enter__(self) -> HttpSession:
        """`with session:` while an HTTP exchange is open: busy, so never evicted."""
        self.busy += 1
        self.last_seen = time.monotonic()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.busy -= 1
        self.last_seen = time.monotonic()

    def check_room(self, calls: int = 1) -> None:
        """Raise Refused unless `calls` more calls fit in this session's share and the server's."""
        capacity = self.capacity
        # A legacy (2024-11-05) session's bodies reach the core undecoded: only the core
        # knows its calls, and the server-wide count does not include them.
        mine = max(len(self.by_request), self.core_session.in_flight)
        if mine + calls > capacity.max_session_inflight:
            raise Refused(
                429,
                f"Too many calls in flight in this session (at most "
                f"{capacity.max_session_inflight}); wait for one to finish",
            )
        if capacity.inflight + calls > capacity.max_inflight:
            raise Refused(
                503,
                f"Too many calls in flight on this server (at most {capacity.max_inflight}); "
                "try again later",
            )

    def open_request_stream(self, request_id: RequestId, sse: bool) -> Stream:
        stream = self.streams.open(sse)
        self.by_request[request_id] = stream
        self.capacity.inflight += 1
        return stream

    def open_exchange(self, exchange: Exchange) -> Stream:
        """A JSON-only stream for an exchange's one answer, found by the exchange itself."""
        stream = self.streams.open(sse=False)
        self.by_request[exchange] = stream
        self.capacity.inflight += exchange.calls
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
        if is_valid_id(request_id) and request_id in self.by_request:
            self._finish(request_id)

    def close(self) -> None:
        self.core_session.close()
        # Closing cancels the calls; none will answer, so none counts any more.
        self.capacity.inflight -= sum(
            key.calls if type(key) is Exchange else 1 for key in self.by_request
        )
        self.by_request.clear()
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
        capacity: Capacity,
    ) -> None:
        self.core = core
        self.ttl = ttl
        self.max_sessions = max_sessions
        self.replay_events = replay_events
        self.json_only = json_only
        self.capacity = capacity
        self.sessions: dict[str, HttpSession] = {}
        #: Throwaway sessions alive now (single-event SSE, stateless POSTs): they count
        #: against max_sessions like the others.
        self.throwaway = 0
        self.closing = False
        self._reaper: asyncio.Task[None] | None = None

    def _check_room(self) -> None:
        if self.closing:
            # Keep-alive connections outlive the listening socket: refuse them new work.
            raise Refused(503, "Server shutting down; try another instance or later")
        if len(self.sessions) + self.throwaway >= self.max_sessions:
            self.evict_idle()
            if len(self.sessions) + self.throwaway >= self.max_sessions:
                raise Refused(
                    503,
                    f"Too many sessions: the server already has {self.max_sessions}; "
                    "try again later",
                )

    def create(self, credential: str | None) -> HttpSession:
        self._check_room()
        session_id = secrets.token_urlsafe(24)  # 192 bits, visible ASCII
        session = HttpSession(
            self.core, session_id, self.replay_events, self.capacity, credential, self.json_only
        )
        self.sessions[session_id] = session
        session.log.info("session opened (%d live)", len(self.sessions))
        return session

    def ephemeral(self, protocol_version: str | None) -> HttpSession:
        """A throwaway session for one self-contained request (stateless mode, single-event
        SSE); end it with `discard`."""
        self._check_room()
        self.throwaway += 1
        session = HttpSession(self.core, None, 0, self.capacity, None, json_only=False)
        session.core_session.protocol_version = protocol_version
        session.core_session.initialized = True
        return session

    def discard(self, session: HttpSession) -> None:
        session.close()
        self.throwaway -= 1

    def find(self, session_id: str, credential: str | None) -> HttpSession | None:
        """The live session with this id, if it belongs to this credential: a session is
        bound to the credential that created it, and to anyone else it does not exist."""
        session = self.sessions.get(session_id)
        return session if session is not None and session.credential == credential else None

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
        return {
            "sessions": len(self.sessions),
            "throwaway_sessions": self.throwaway,
            "max_sessions": self.max_sessions,
            "calls_in_flight": self.capacity.inflight,
            "max_inflight": self.capacity.max_inflight,
        }
