"""Per-session SSE streams with event ids and a bounded replay buffer (specs/http.md, "Slow
readers")."""

from __future__ import annotations

import asyncio
import re
from collections import deque
from collections.abc import Callable
from typing import Any, Final, TypeVar

from ...core.jsonrpc import RequestId
from ...settings import DEFAULTS
from ..backpressure import EVENT_OVERHEAD, LAGGING, EventQueue, SlowReaders, compact

STANDALONE: Final = "0"
#: Put on a reader's queue to end its response while the stream lives on.
CLOSE: Final = ("", b"")
#: Put on a reader's queue by a Ticker: time to send a keepalive.
TICK: Final = ("", b"tick")

Item = tuple[str, bytes] | None
T = TypeVar("T")

#: Our event ids: `<stream>_<seq>`, both decimal (ASCII digits: str.isdigit() would take "²").
_EVENT_ID = re.compile(r"([0-9]{1,18})_([0-9]{1,18})")


def parse_event_id(value: str) -> tuple[str, int] | None:
    """(stream key, sequence number) of an event id we issued, or None if it is not one."""
    match = _EVENT_ID.fullmatch(value)
    return (match[1], int(match[2])) if match else None


class Ticker:
    """Puts TICK on a reader's queue every `interval` seconds until cancelled: one timer,
    and the reader's plain `await queue.get()` learns when to send a keepalive. Made
    unarmed (`armed=False`), its timer starts only when the reader first waits (`wait`):
    a POST whose answer is ready at once never makes one."""

    __slots__ = ("_handle", "_interval", "_queue")

    def __init__(self, queue: asyncio.Queue[Any], interval: float, *, armed: bool = True) -> None:
        self._queue = queue
        self._interval = interval
        self._handle: asyncio.TimerHandle | None = None
        if armed:
            self.arm()

    def arm(self) -> None:
        if self._handle is None:
            self._handle = asyncio.get_running_loop().call_later(self._interval, self._tick)

    def _tick(self) -> None:
        self._queue.put_nowait(TICK)
        self._handle = asyncio.get_running_loop().call_later(self._interval, self._tick)

    def cancel(self) -> None:
        if self._handle is not None:
            self._handle.cancel()


async def wait(queue: asyncio.Queue[T], ticker: Ticker | None) -> T:
    """The queue's next item; about to wait for it, the reader's keepalives start."""
    if ticker is not None and queue.empty():
        ticker.arm()
    return await queue.get()


class Stream:
    __slots__ = ("finished", "key", "queue", "replayable", "request_id", "seq", "sse")

    def __init__(self, key: str, sse: bool) -> None:
        self.key = key
        #: The request whose answer ends this stream (None: the GET stream, an exchange).
        self.request_id: RequestId | None = None
        self.sse = sse  # the reader takes events (else it waits for one JSON response)
        #: Events are kept for resumption once the client has seen event ids on this stream.
        self.replayable = False
        self.seq = 0
        self.queue: EventQueue[tuple[str, bytes] | None] | None = None
        self.finished = False


#: Told each event of a replayable request stream: (stream key, seq, data, final).
Mirror = Callable[[str, int, bytes, bool], None]


class StreamSet:
    def __init__(
        self,
        replay_events: int,
        key_prefix: str = "",
        *,
        send_buffer_bytes: int = DEFAULTS.send_buffer_bytes,
        close_slow: bool = False,
        slow_readers: SlowReaders | None = None,
    ) -> None:
        self._next_key = 1
        #: Stream keys are `<prefix><9-digit counter>` with a prefix (a replica's number:
        #: replicas sharing a session never mint the same key), plain counters without.
        self.key_prefix = key_prefix
        #: Keeps request streams' events where other replicas can resume them (a shared store).
        self.mirror: Mirror | None = None
        #: Readers following another replica's stream through the store: ended with the
        #: session. Made on first use, as the replay buffer is: an idle session has neither.
        self.followers: set[asyncio.Queue[Item]] | None = None
        self.standalone = Stream(STANDALONE, sse=True)
        self.standalone.replayable = True
        self.by_key: dict[str, Stream] = {STANDALONE: self.standalone}
        self._replay_events = replay_events
        self._replay: deque[tuple[str, int, bytes]] | None = None
        self._replay_bytes = 0
        #: Bytes a reader's queue, or the replay buffer, may hold (backpressure.py).
        self.bound = send_buffer_bytes
        self.close_slow = close_slow
        #: Notifications shed for lagging readers, and streams closed for lagging (the
        #: server's tally, shared by its sessions: the metrics read it).
        self.slow_readers = slow_readers if slow_readers is not None else SlowReaders()

    @property
    def replay(self) -> deque[tuple[str, int, bytes]]:
        """The last `replay_events` events of replayable streams, for Last-Event-ID."""
        if self._replay is None:
            self._replay = deque()
        return self._replay

    def _remember(self, key: str, seq: int, data: bytes) -> None:
        """Into the replay buffer, which keeps the last `replay_events` events, and fewer
        when they are more than `bound` bytes (the newest always)."""
        replay = self.replay
        # Kept for a long time, so in bytes of its own size: orjson's output holds a 4 KB
        # allocation in glibc's heap however short it is (a session's 256 events: 1 MB),
        # which stays in the heap after the session ends (specs/decisions.md, 50).
        data = compact(data)
        replay.append((key, seq, data))
        self._replay_bytes += len(data) + EVENT_OVERHEAD
        while len(replay) > self._replay_events or (
            self._replay_bytes > self.bound and len(replay) > 1
        ):
            self._replay_bytes -= len(replay.popleft()[2]) + EVENT_OVERHEAD

    def follow(self, queue: asyncio.Queue[Item]) -> None:
        if self.followers is None:
            self.followers = set()
        self.followers.add(queue)

    def unfollow(self, queue: asyncio.Queue[Item]) -> None:
        if self.followers is not None:
            self.followers.discard(queue)

    def open(self, sse: bool) -> Stream:
        if self._next_key % 64 == 0:
            self._prune()
        number = self._next_key
        stream = Stream(f"{self.key_prefix}{number:09d}" if self.key_prefix else str(number), sse)
        self._next_key += 1
        self.by_key[stream.key] = stream
        return stream

    def _prune(self) -> None:
        """Forget finished streams none of whose events are left to replay."""
        live = {key for key, _, _ in self._replay or ()}
        for key, stream in list(self.by_key.items()):
            if stream.finished and key not in live and stream is not self.standalone:
                del self.by_key[key]

    def keep(self, stream: Stream, events: list[tuple[str, bytes]], finished: bool) -> None:
        """Start keeping a stream's events for resumption, beginning with these (pushed
        before it was replayable); `finished`: the last of them ends the stream."""
        if stream.replayable:
            return
        stream.replayable = True
        for index, (event_id, data) in enumerate(events):
            seq = int(event_id.rpartition("_")[2])
            self._remember(stream.key, seq, data)
            if self.mirror is not None:
                self.mirror(stream.key, seq, data, finished and index == len(events) - 1)

    def push(self, stream: Stream, data: bytes, final: bool = False) -> None:
        stream.seq += 1
        event_id = f"{stream.key}_{stream.seq}"
        if stream.replayable:
            self._remember(stream.key, stream.seq, data)
            if self.mirror is not None:
                self.mirror(stream.key, stream.seq, data, final)
        queue = stream.queue
        if queue is not None:
            if queue.bytes > LAGGING:  # it waits a while: worth its own allocation
                data = compact(data)
            queue.put_nowait((event_id, data))
            if queue.bytes > self.bound:
                self._lagging(stream, queue)

    def _lagging(self, stream: Stream, queue: EventQueue[tuple[str, bytes] | None]) -> None:
        """A reader that is `bound` bytes behind: close its stream when the policy says so
        and the client can resume it (it has seen event ids), else shed notifications."""
        if self.close_slow and stream.sse and stream.replayable:
            self.slow_readers.closed_streams += 1
            queue.clear()
            queue.put_nowait(CLOSE)
            stream.queue = None
            return
        queue.shed(self.bound, self.slow_readers)

    def finish(self, stream: Stream) -> None:
        stream.finished = True
        if stream.queue is not None:
            stream.queue.put_nowait(None)
        # A stream whose events may be replayed stays resumable; _prune forgets it later.
        if stream is not self.standalone and not stream.replayable:
            self.by_key.pop(stream.key, None)

    def forget(self, stream: Stream) -> None:
        """Drop a finished stream and its events: the client read it to its end
        (`connections.when_read`), so nothing of it is left to resume."""
        self.by_key.pop(stream.key, None)
        replay, key = self._replay, stream.key
        if replay is None:
            return
        kept: deque[tuple[str, int, bytes]] = deque()
        for event in replay:
            if event[0] == key:
                self._replay_bytes -= len(event[2]) + EVENT_OVERHEAD
            else:
                kept.append(event)
        self._replay = kept or None  # an idle session holds no buffer

    def attach(self, stream: Stream) -> EventQueue[tuple[str, bytes] | None]:
        queue: EventQueue[tuple[str, bytes] | None] = EventQueue()
        if stream.queue is not None:
            stream.queue.put_nowait(None)  # a newer reader replaces the old one
        stream.queue = queue
        return queue

    def detach(self, stream: Stream, queue: asyncio.Queue[tuple[str, bytes] | None]) -> None:
        if stream.queue is queue:
            stream.queue = None

    def resume(self, key: str, after: int) -> tuple[Stream, list[tuple[str, bytes]]] | None:
        """The stream an event id (`parse_event_id`) belongs to and its events after it."""
        stream = self.by_key.get(key)
        if stream is None:
            return None
        missed = [(f"{k}_{s}", d) for k, s, d in self._replay or () if k == key and s > after]
        return stream, missed

    def close_all(self) -> None:
        """The session ended: end every reader, and let go of every event kept for them at
        once (a deleted session's remains wait for the cyclic collector; its events do not)."""
        for queue in list(self.followers or ()):
            queue.put_nowait(None)
        self.followers = None
        for stream in list(self.by_key.values()):
            if stream.queue is not None:
                stream.queue.put_nowait(None)
                stream.queue = None
        self.by_key = {STANDALONE: self.standalone}
        self._replay = None
        self._replay_bytes = 0
