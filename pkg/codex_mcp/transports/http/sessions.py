"""HTTP sessions: one core ServerSession each, plus routing of what it sends."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Hashable
from typing import Any

import orjson

from ...core.jsonrpc import JsonObject, RequestId, is_valid_id
from ...core.server import ServerCore
from ...core.session import ServerSession
from ...core.tasks import TaskStore
from ...session_logs import session_label
from ...settings import DEFAULTS
from ..backpressure import SlowReaders
from .errors import Busy, StoreUnavailable
from .store import OPENED, SessionRecord, SessionStore
from .streams import CLOSE, STANDALONE, Stream, StreamSet

log = logging.getLogger("codex_mcp.http")


class Capacity:
    """Calls in flight across every session of a manager, against the caps. A running
    2026-07-28 task (`tasks`, the core's) is a call in flight too."""

    __slots__ = ("inflight", "max_inflight", "max_session_inflight", "tasks")

    def __init__(
        self, max_inflight: int, max_session_inflight: int, tasks: TaskStore | None = None
    ) -> None:
        self.inflight = 0
        self.max_inflight = max_inflight
        self.max_session_inflight = max_session_inflight
        self.tasks = tasks

    def running(self) -> int:
        """Calls in flight now: those of open exchanges, and running tasks."""
        return self.inflight + (self.tasks.active if self.tasks is not None else 0)


class Exchange:
    """An HTTP exchange whose answer has no request id of its own to be found by: a batch,
    or a message the core answers with an error (the core tags that answer with it).
    `calls` is how many requests it carries, counted against the caps while it runs."""

    __slots__ = ("calls",)

    def __init__(self, calls: int) -> None:
        self.calls = calls


class SessionLog(logging.LoggerAdapter[logging.Logger]):
    """Names the session (by its label, not its whole id) on every line about it."""

    def process(self, msg: Any, kwargs: Any) -> tuple[Any, Any]:
        return f"[session {self.extra['session'] if self.extra else '-'}] {msg}", kwargs


class HttpSession:
    """A core session reachable over HTTP. Also its own Outbound.

    With a shared store (`store`), this is this replica's copy of a session every replica
    may serve: its state is saved when it changes, its standalone stream's events go to
    the store (whichever replica holds the GET stream reads them there), its request
    streams' replayable events are mirrored there, and our requests' ids name this
    replica so the client's answers find their way back."""

    def __init__(
        self,
        core: ServerCore,
        session_id: str | None,
        replay_events: int,
        capacity: Capacity,
        credential: str | None = None,
        json_only: bool = False,
        store: SessionStore | None = None,
        ttl: float = 0.0,
        *,
        send_buffer_bytes: int = DEFAULTS.send_buffer_bytes,
        close_slow: bool = False,
        slow_readers: SlowReaders | None = None,
    ) -> None:
        self.id = session_id
        self.capacity = capacity
        self.credential = credential
        self.json_only = json_only
        self.by_request: dict[Hashable, Stream] = {}
        self.last_seen = time.monotonic()
        self.busy = 0  # open HTTP exchanges (see __enter__); a busy session is never evicted
        self.log = SessionLog(log, {"session": session_label(session_id)})
        self.core_session: ServerSession = core.open_session(self, session_id)
        self.core_session.principal = credential  # whose it is, for per-principal shares
        self.core_session.on_client_notification = self._on_client_notification
        #: The shared store this session lives in; None: this process alone.
        self.store = store if store is not None and store.shared and session_id else None
        #: The save of a state change, awaited before the next answer goes out (the
        #: client's next request may reach another replica, which must find it).
        self.saving: asyncio.Future[None] | None = None
        #: Standalone events appended to the store since the last flush.
        self.unstored = False
        #: Whether another replica may hold a copy, so a save must be announced: not
        #: before this replica's first save of a session it created (its id was not
        #: given out yet), always for one it loaded.
        self.copies_elsewhere = False
        if self.store is not None:
            self.ttl = ttl
            self._touched = self.last_seen
            self._saved_subscriptions: set[str] = set()
            self.streams = StreamSet(
                replay_events,
                key_prefix=str(self.store.node),
                send_buffer_bytes=send_buffer_bytes,
                close_slow=close_slow,
                slow_readers=slow_readers,
            )
            self.streams.mirror = self._mirror
            self.core_session.number_ids(self.store.node, self.store.stride)
            self.core_session.on_state_change = self._state_changed
        else:
            self.streams = StreamSet(
                replay_events,
                send_buffer_bytes=send_buffer_bytes,
                close_slow=close_slow,
                slow_readers=slow_readers,
            )

    # Shared state ----------------------------------------------------------------
    def record(self) -> SessionRecord:
        core = self.core_session
        return SessionRecord(
            credential=self.credential,
            protocol_version=core.protocol_version,
            client_info=core.client_info,
            client_capabilities=core.client_capabilities,
            initialized=core.initialized,
            log_threshold=core.log_threshold,
            subscriptions=sorted(core.subscriptions),
        )

    def apply(self, record: SessionRecord) -> None:
        """Take the state another replica saved."""
        core = self.core_session
        core.protocol_version = record.protocol_version
        core.client_info = record.client_info
        core.client_capabilities = record.client_capabilities
        core.initialized = record.initialized
        core.log_threshold = record.log_threshold
        core.subscriptions = set(record.subscriptions)
        self.copies_elsewhere = True
        if self.store is not None:
            self._saved_subscriptions = set(record.subscriptions)

    def _state_changed(self, _: ServerSession) -> None:
        previous = self.saving
        self.saving = asyncio.ensure_future(self._save(previous))

    async def _save(self, previous: asyncio.Future[None] | None) -> None:
        if previous is not None:
            with contextlib.suppress(Exception):
                await previous  # saves land in the order the changes happened
        store = self.store
        assert store is not None and self.id is not None
        record = self.record()
        gone = self._saved_subscriptions - set(record.subscriptions)
        self._saved_subscriptions = set(record.subscriptions)
        announce, self.copies_elsewhere = self.copies_elsewhere, True
        await store.save(self.id, record, self.ttl, sorted(gone), announce)

    @property
    def unflushed(self) -> bool:
        """A state change or standalone events not yet known to be stored."""
        return self.saving is not None or self.unstored

    async def flush(self) -> None:
        """Wait for the state to be saved (raises StoreUnavailable if it cannot be), and
        for the standalone events sent so far to be stored: an answer never overtakes
        what its call sent before it, whichever replica the client asks next."""
        if self.unstored and self.store is not None:
            self.unstored = False
            with contextlib.suppress(StoreUnavailable):  # lost, and logged: still answer
                await self.store.written()
        saving = self.saving
        if saving is not None:
            try:
                await saving
            finally:
                if self.saving is saving:
                    self.saving = None

    def opened_sse(self, stream: Stream, request_id: RequestId) -> None:
        """A request's stream turned SSE (resumable): with a shared store, note whose it
        is, so a replica resuming it can answer with an error if this one dies."""
        if self.store is not None and self.id is not None:
            self.store.append(self.id, stream.key, OPENED, orjson.dumps(request_id), False)

    def _mirror(self, key: str, seq: int, data: bytes, final: bool) -> None:
        assert self.store is not None and self.id is not None
        self.store.append(self.id, key, seq, data, final)

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
            if self.store is not None:
                # Numbered by the store: every replica of the session writes to this stream.
                self.store.append(self.id, STANDALONE, 0, data, False)  # type: ignore[arg-type]
                self.unstored = True
                return
        self.streams.push(stream, data, is_final)
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
        self.last_seen = now = time.monotonic()
        if self.store is not None and now - self._touched > self.ttl / 8:
            # The shared TTL is refreshed in the background, a few times per TTL.
            self._touched = now
            assert self.id is not None
            self.store.touch(self.id, self.ttl, self.core_session.initialized)
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.busy -= 1
        self.last_seen = time.monotonic()

    def check_room(self, calls: int = 1) -> None:
        """Raise Busy unless `calls` more calls fit in this session's share and the server's."""
        capacity = self.capacity
        # A legacy (2024-11-05) session's bodies reach the core undecoded: only the core
        # knows its calls, and the server-wide count does not include them.
        mine = max(len(self.by_request), self.core_session.in_flight)
        if mine + calls > capacity.max_session_inflight:
            raise Busy(
                429,
                f"Too many calls in flight in this session (at most "
                f"{capacity.max_session_inflight}); wait for one to finish",
            )
        if capacity.running() + calls > capacity.max_inflight:
            raise Busy(
                503,
                f"Too many calls in flight on this server (at most {capacity.max_inflight}); "
                "try again later",
            )

    def open_request_stream(self, request_id: RequestId, sse: bool) -> Stream:
        stream = self.streams.open(sse)
        stream.request_id = request_id
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
