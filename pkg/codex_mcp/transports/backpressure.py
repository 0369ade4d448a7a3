"""What a client that stops reading costs: a bounded number of bytes per outgoing queue, and
the drop policy past it (decision 34; specs/isolation.md, "Clients that do not read")."""

from __future__ import annotations

import asyncio
import builtins
from collections import deque
from collections.abc import Callable
from typing import TypeVar

#: How orjson writes a notification the core made (`jsonrpc.notification`): its method first.
_NOTIFICATION = b'{"jsonrpc":"2.0","method":"notifications/'
_DROPPABLE = (_NOTIFICATION + b"progress", _NOTIFICATION + b"message")

T = TypeVar("T")
#: What one waiting event costs beyond its bytes (its tuple, its id string, a deque slot):
#: counted, so a flood of small notifications is bounded in memory, not only in bytes.
EVENT_OVERHEAD = 160


#: Past this many bytes waiting, a reader lags, and what waits for it is compacted.
LAGGING = 65536


def compact(data: bytes) -> bytes:
    """`data` in a bytes object of its own size: orjson's output keeps a 4 KB allocation
    however short it is, so a queue of small notifications would cost 4 KB each (a 3 KB
    message holds 8 KB). From LAGGING bytes up it is returned as it is: orjson's slack is
    small beside it (6% at 100 KB) and a copy of a large result is not."""
    return bytes(memoryview(data)) if len(data) < LAGGING else data


def is_droppable(data: bytes) -> bool:
    """A progress or log notification: the newest says as much as the ones it follows."""
    return data.startswith(_DROPPABLE)


def shed(
    items: deque[T],
    data: Callable[[T], bytes | None],
    size: int,
    bound: int,
    overhead: int = 0,
) -> int:
    """Drop from `items` (oldest first) progress and log notifications, and notifications
    that repeat one still waiting, until their `size` in bytes is at most half of `bound`.
    `data(item)` is an item's message (None: not a message, kept); each item counts its
    length plus `overhead`. Returns the bytes freed; the items kept keep their order."""
    target = bound // 2
    freed = 0
    seen: set[bytes] = set()
    kept: deque[T] = deque()
    for item in items:
        message = data(item)
        if message is not None and size - freed > target and message.startswith(_NOTIFICATION):
            if is_droppable(message) or message in seen:
                freed += len(message) + overhead
                continue
            seen.add(message)
        kept.append(item)
    items.clear()
    items.extend(kept)
    return freed


class SlowReaders:
    """What readers that lagged past their bound have cost so far, across every stream of
    a server: notifications dropped (how many, how many bytes) and streams closed. Kept
    for the metrics; one integer add or two when it happens, nothing otherwise."""

    __slots__ = ("closed_streams", "shed_bytes", "shed_events")

    def __init__(self) -> None:
        self.shed_events = 0
        self.shed_bytes = 0
        self.closed_streams = 0


class EventQueue(asyncio.Queue[T]):
    """A reader's queue of SSE events, `(event id, data)` items (or markers), that counts
    the bytes it holds so a writer can tell, with one compare, when its reader lags."""

    #: Where an item holds its message.
    DATA = 1
    bytes: int
    _queue: deque[T]

    def _init(self, maxsize: int) -> None:
        self._queue = deque()
        self.bytes = 0

    def _put(self, item: T) -> None:
        self._queue.append(item)
        if item is not None:
            self.bytes += len(item[self.DATA]) + EVENT_OVERHEAD  # type: ignore[index]

    def _get(self) -> T:
        item = self._queue.popleft()
        if item is not None:
            self.bytes -= len(item[self.DATA]) + EVENT_OVERHEAD  # type: ignore[index]
        return item

    def shed(self, bound: int, tally: SlowReaders | None = None) -> int:
        """Drop notifications per the policy (module doc); returns how many bytes went
        (and adds them, and the events dropped, to `tally`)."""
        waiting = len(self._queue)
        freed = shed(self._queue, self._data, self.bytes, bound, EVENT_OVERHEAD)
        self.bytes -= freed
        if tally is not None:
            tally.shed_bytes += freed
            tally.shed_events += waiting - len(self._queue)
        return freed

    def clear(self) -> None:
        """Drop everything waiting (the stream is being closed)."""
        self._queue.clear()
        self.bytes = 0

    def _data(self, item: T) -> builtins.bytes | None:
        """An item's message; None for markers (CLOSE, TICK), which are always kept."""
        if isinstance(item, tuple) and item[0]:  # markers have no event id
            data = item[self.DATA]
            return data if isinstance(data, builtins.bytes) else None
        return None


class MessageQueue(EventQueue[T]):
    """A 2026-07-28 exchange's queue: `(data, final)` items (or markers)."""

    DATA = 0
