"""The session manager: issues ids, caps and evicts sessions, ends them, and keeps this
replica's copies of shared sessions (specs/http.md, "Sessions"; specs/scale.md)."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import secrets
import time
from collections.abc import Iterator
from typing import Any

from ...core.jsonrpc import JsonObject, is_valid_id
from ...core.server import ServerCore
from ...core.session import ServerSession
from ...heap_trim import release_free_memory
from ...session_logs import session_label
from ...settings import DEFAULTS
from ..backpressure import SlowReaders
from .errors import Busy
from .sessions import Capacity, HttpSession
from .store import MemoryStore, SessionRecord, SessionStore

log = logging.getLogger("codex_mcp.http")
#: Why a session the client DELETEd ended.
DELETED = "deleted by the client"


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
        store: SessionStore | None = None,
        send_buffer_bytes: int = DEFAULTS.send_buffer_bytes,
        close_slow: bool = False,
    ) -> None:
        self.core = core
        self.ttl = ttl
        self.max_sessions = max_sessions
        self.replay_events = replay_events
        self.send_buffer_bytes = send_buffer_bytes
        self.close_slow = close_slow
        #: What lagging SSE readers have cost, over every stream (the metrics read it).
        self.slow_readers = SlowReaders()
        self.json_only = json_only
        self.capacity = capacity
        self.store: SessionStore = store if store is not None else MemoryStore()
        #: Whether other replicas share these sessions (the store is Redis).
        self.shared = self.store.shared
        self.sessions: dict[str, HttpSession] = {}
        #: Throwaway sessions alive now (single-event SSE, stateless POSTs): they count
        #: against max_sessions like the others.
        self.throwaway = 0
        #: The peers of calls with no session of their own (throwaway sessions, 2026-07-28
        #: exchanges): shutdown drains them with the sessions, so each call is answered.
        self.unnamed: set[ServerSession] = set()
        #: 2026-07-28 subscriptions/listen streams open now: each holds a connection for
        #: as long as a session's GET stream does, so each counts as a session.
        self.listening = 0
        self.closing = False
        #: Sessions ended since the reaper last handed free memory back (`_reap`).
        self.ended_unreleased = 0
        self._reaper: asyncio.Task[None] | None = None
        self._loading: dict[str, asyncio.Future[HttpSession | None]] = {}

    def _check_room(self) -> None:
        if self.closing:
            # Keep-alive connections outlive the listening socket: refuse them new work.
            raise Busy(503, "Server shutting down; try another instance or later")
        if self.live >= self.max_sessions:
            self.evict_idle()
            if self.live >= self.max_sessions:
                raise Busy(
                    503,
                    f"Too many sessions: the server already has {self.max_sessions} "
                    "(throwaway sessions and listen streams included); try again later",
                )

    @property
    def live(self) -> int:
        """What counts against max_sessions."""
        return len(self.sessions) + self.throwaway + self.listening

    def start_listening(self) -> None:
        """A subscriptions/listen stream opens (Busy when there is no room); call
        `stop_listening` when it ends."""
        self._check_room()
        self.listening += 1

    def stop_listening(self) -> None:
        self.listening -= 1

    def _new(self, session_id: str | None, credential: str | None, shared: bool) -> HttpSession:
        return HttpSession(
            self.core,
            session_id,
            self.replay_events,
            self.capacity,
            credential,
            self.json_only,
            store=self.store if shared else None,
            ttl=self.ttl,
            send_buffer_bytes=self.send_buffer_bytes,
            close_slow=self.close_slow,
            slow_readers=self.slow_readers,
        )

    def create(self, credential: str | None, shared: bool = True) -> HttpSession:
        """A new session; `shared=False` keeps it to this process (one that lives as long
        as a stream of this process: the 2024-11-05 transport)."""
        self._check_room()
        session_id = secrets.token_urlsafe(24)  # 192 bits, visible ASCII
        session = self._new(session_id, credential, shared)
        self.sessions[session_id] = session
        # A session's ordinary life (opened, deleted) is logged at debug: a client that
        # makes a session per call would make it two lines per call.
        session.log.debug("session opened (%d live)", len(self.sessions))
        return session

    def ephemeral(self, protocol_version: str | None, credential: str | None) -> HttpSession:
        """A throwaway session for one self-contained request (stateless mode, single-event
        SSE) of `credential`'s (the audit names its caller); end it with `discard`."""
        self._check_room()
        self.throwaway += 1
        session = self._new(None, credential, shared=False)
        session.core_session.protocol_version = protocol_version
        session.core_session.initialized = True
        self.unnamed.add(session.core_session)
        return session

    def discard(self, session: HttpSession) -> None:
        self.unnamed.discard(session.core_session)
        session.close()
        self.throwaway -= 1

    @contextlib.contextmanager
    def serving(self, peer: ServerSession) -> Iterator[None]:
        """While a 2026-07-28 exchange runs on `peer`: drained at shutdown like a session."""
        self.unnamed.add(peer)
        try:
            yield
        finally:
            self.unnamed.discard(peer)

    def find(self, session_id: str, credential: str | None) -> HttpSession | None:
        """The live session with this id, if it belongs to this credential: a session is
        bound to the credential that created it, and to anyone else it does not exist."""
        session = self.sessions.get(session_id)
        return session if session is not None and session.credential == credential else None

    async def load(self, session_id: str, credential: str | None) -> HttpSession | None:
        """A session another replica created, from the shared store (None: there is no
        such session, or it is another credential's). Raises StoreUnavailable."""
        if not self.shared:
            return None
        session = self.sessions.get(session_id)
        if session is None:
            pending = self._loading.get(session_id)
            if pending is None:  # one load per session, however many requests wait on it
                pending = asyncio.ensure_future(self._load(session_id))
                self._loading[session_id] = pending
                pending.add_done_callback(lambda _: self._loading.pop(session_id, None))
            session = await asyncio.shield(pending)
        return session if session is not None and session.credential == credential else None

    async def _load(self, session_id: str) -> HttpSession | None:
        record = await self.store.load(session_id)
        if record is None:
            return None
        existing = self.sessions.get(session_id)
        if existing is not None:
            return existing
        self._check_room()
        session = self._new(session_id, record.credential, shared=True)
        session.apply(record)
        self.sessions[session_id] = session
        session.log.debug("session loaded from the shared store (%d here)", len(self.sessions))
        return session

    def get(self, session_id: str) -> HttpSession | None:
        return self.sessions.get(session_id)

    def end(self, session_id: str, reason: str) -> bool:
        """End a session here (every replica's copy, when it is shared: see `delete`)."""
        session = self.sessions.pop(session_id, None)
        if session is None:
            return False
        session.close()
        self.ended_unreleased += 1
        level = logging.DEBUG if reason == DELETED else logging.INFO
        session.log.log(level, "session ended: %s (%d live)", reason, len(self.sessions))
        return True

    async def delete(self, session: HttpSession) -> None:
        """DELETE: the session ends everywhere. Raises StoreUnavailable."""
        assert session.id is not None
        if session.store is not None:
            await self.store.delete(session.id)
        self.end(session.id, DELETED)

    def evict_idle(self) -> int:
        """End sessions idle past the TTL. A shared session's copy is only dropped here:
        the store's TTL, refreshed by whichever replica serves it, ends the session."""
        cutoff = time.monotonic() - self.ttl
        stale = [sid for sid, s in self.sessions.items() if s.last_seen < cutoff and s.busy == 0]
        for sid in stale:
            self.end(sid, "idle here" if self.sessions[sid].store is not None else "idle")
        return len(stale)

    def start(self) -> None:
        if self._reaper is None:
            self._reaper = asyncio.get_running_loop().create_task(self._reap())

    async def _reap(self) -> None:
        interval = max(0.05, min(self.ttl / 4, 30.0))
        while True:
            await asyncio.sleep(interval)
            self.evict_idle()
            if self.ended_unreleased:
                # What ended sessions held is free but stays in glibc's heap, between chunks
                # in use: a trim hands it back (20 MB in ~3.5 ms after 50 sessions' replay
                # buffers; decision 86).
                self.ended_unreleased = 0
                release_free_memory()

    async def shutdown(self, timeout: float) -> None:
        """Refuse new sessions, let in-flight calls finish (bounded), then end every session
        here (a shared session goes on: this replica only drops its copy)."""
        self.closing = True
        if self._reaper is not None:
            self._reaper.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._reaper
        # Every call gets its answer within the timeout: those in sessions, and those
        # with none (which aiohttp would otherwise cut off unanswered a timeout later).
        peers = [s.core_session for s in self.sessions.values()] + list(self.unnamed)
        # Running tasks are calls in flight too: they finish, or are cancelled, in time.
        await asyncio.gather(
            self.core.tasks.drain(timeout), *(peer.drain(timeout) for peer in peers)
        )
        for sid in list(self.sessions):
            self.end(sid, "server shutting down")

    def stats(self) -> dict[str, Any]:
        stats = {
            "sessions": len(self.sessions),
            "throwaway_sessions": self.throwaway,
            "listen_streams": self.listening,
            "max_sessions": self.max_sessions,
            "calls_in_flight": self.capacity.running(),
            "tasks_running": self.core.tasks.active,
            "max_inflight": self.capacity.max_inflight,
        }
        if self.shared:
            stats["replica"] = self.store.node
        return stats

    # -- what other replicas say (the store's ClusterHandlers) ------------------------------
    def deliver(self, session_id: str, message: JsonObject) -> None:
        session = self.sessions.get(session_id)
        if session is None:
            log.debug(
                "[session %s] an answer for a session not here: dropped", session_label(session_id)
            )
            return
        session.core_session.receive(message)

    def cancel(self, session_id: str, request_id: Any) -> None:
        session = self.sessions.get(session_id)
        if session is not None and is_valid_id(request_id):
            session.core_session.cancel_request(request_id, "cancelled by the client")
            session.end_request(request_id)

    def ended(self, session_id: str) -> None:
        self.end(session_id, "ended on another replica")

    def wanted(self, session_id: str) -> None:
        session = self.sessions.get(session_id)
        if session is None or session.store is None or not session.core_session.protocol_version:
            return
        session.core_session.state_changed()  # saved again, and told to every replica

    def recovered(self) -> None:
        for session in list(self.sessions.values()):
            if session.store is not None and session.core_session.protocol_version:
                session.core_session.state_changed()  # saved again, in order

    def state(self, session_id: str, record: SessionRecord) -> None:
        session = self.sessions.get(session_id)
        if session is not None and session.credential == record.credential:
            session.apply(record)
