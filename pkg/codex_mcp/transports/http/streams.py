"""Per-session SSE streams with event ids and a bounded replay buffer.

Every message a session sends goes to exactly one stream: the stream of the
request it belongs to, or the session's standalone (GET) stream. A stream with
no reader attached keeps its events in the replay buffer, so a client can
resume it with Last-Event-ID.
"""

from __future__ import annotations

import asyncio
import re
from collections import deque
from collections.abc import Callable
from typing import Final

STANDALONE: Final = "0"
#: Put on a reader's queue to end its response while the stream lives on.
CLOSE: Final = ("", b"")
#: Put on a reader's queue by a Ticker: time to send a keepalive.
TICK: Final = ("", b"tick")

Item = tuple[str, bytes] | None

#: Our event ids: `<stream>_<seq>`, both decimal (ASCII digits: str.isdigit() would take "²").
_EVENT_ID = re.compile(r"([0-9]{1,18})_([0-9]{1,18})")


def parse_event_id(value: str) -> tuple[str, int] | None:
    """(stream key, sequence number) of an event id we issued, or None if it is not one."""
    match = _EVENT_ID.fullmatch(value)
    return (match[1], int(match[2])) if match else None


class Ticker:
    """Puts TICK on a reader's queue every `interval` seconds until cancelled: one timer,
    and the reader's plain `await queue.get()` learns when to send a keepalive."""

    __slots__ = ("_handle", "_interval", "_queue")

    def __init__(self, queue: asyncio.Queue[Item], interval: float) -> None:
        self._queue = queue
        self._interval = interval
        self._handle = asyncio.get_running_loop().call_later(interval, self._tick)

    def _tick(self) -> None:
        self._queue.put_nowait(TICK)
        self._handle = asyncio.get_running_loop().call_later(self._interval, self._tick)

    def cancel(self) -> None:
        self._handle.cancel()


class Stream:
    __slots__ = ("finished", "key", "queue", "replayable", "seq", "sse")

    def __init__(self, key: str, sse: bool) -> None:
        self.key = key
        self.sse = sse  # the reader takes events (else it waits for one JSON response)
        #: Events are kept for resumption once the client has seen event ids on this stream.
        self.replayable = False
        self.seq = 0
        self.queue: asyncio.Queue[tuple[str, bytes] | None] | None = None
        self.finished = False


#: Told each event of a replayable request stream: (stream key, seq, data, final).
Mirror = Callable[[str, int, bytes, bool], None]


class StreamSet:
    def __init__(self, replay_events: int, key_prefix: str = "") -> None:
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

    @property
    def replay(self) -> deque[tuple[str, int, bytes]]:
        """The last `replay_events` events of replayable streams, for Last-Event-ID."""
        if self._replay is None:
            self._replay = deque(maxlen=self._replay_events)
        return self._replay

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
            self.replay.append((stream.key, seq, data))
            if self.mirror is not None:
                self.mirror(stream.key, seq, data, finished and index == len(events) - 1)

    def push(self, stream: Stream, data: bytes, final: bool = False) -> None:
        stream.seq += 1
        event_id = f"{stream.key}_{stream.seq}"
        if stream.replayable:
            self.replay.append((stream.key, stream.seq, data))
            if self.mirror is not None:
                self.mirror(stream.key, stream.seq, data, final)
        if stream.queue is not None:
            stream.queue.put_nowait((event_id, data))

    def finish(self, stream: Stream) -> None:
        stream.finished = True
        if stream.queue is not None:
            stream.queue.put_nowait(None)
        # A stream whose events may be replayed stays resumable; _prune forgets it later.
        if stream is not self.standalone and not stream.replayable:
            self.by_key.pop(stream.key, None)

    def attach(self, stream: Stream) -> asyncio.Queue[tuple[str, bytes] | None]:
        queue: asyncio.Queue[tuple[str, bytes] | None] = asyncio.Queue()
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
        for queue in list(self.followers or ()):
            queue.put_nowait(None)
        self.followers = None
        for stream in list(self.by_key.values()):
            if stream.queue is not None:
                stream.queue.put_nowait(None)
                stream.queue = None
