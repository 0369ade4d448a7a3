"""Where HTTP sessions live: this process's memory (the default), or a store replicas share
(specs/scale.md)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

from ...core.jsonrpc import JsonObject


@dataclass(slots=True)
class SessionRecord:
    """What a session remembers of its client, as any replica needs it."""

    credential: str | None = None
    protocol_version: str | None = None
    client_info: JsonObject = field(default_factory=dict)
    client_capabilities: JsonObject = field(default_factory=dict)
    initialized: bool = False
    log_threshold: int = 0
    subscriptions: list[str] = field(default_factory=list)


#: The seq of a request stream's first stored entry, which carries its request's id.
OPENED = -1


@dataclass(frozen=True, slots=True)
class StoredEvent:
    """One replayable SSE event as the store keeps it: `entry` orders every event of a
    session; `stream` and `seq` make its event id; `final` ends a POST stream. A request
    stream's seq OPENED entry is no event: its data is the request's id (JSON)."""

    entry: tuple[int, int]
    stream: str
    seq: int
    final: bool
    data: bytes

    @property
    def event_id(self) -> str:
        return f"{self.stream}_{self.seq}"


@dataclass(frozen=True, slots=True)
class NewReader:
    """A GET stream of the session opened (`announce_reader`): an older one ends."""

    token: str


#: Called with each event of a followed session as it is stored (or a reader's
#: announcement), or with None when the follow ends (the store's connection was lost: the
#: reader should end so its client resumes from the store).
EventCallback = Callable[[StoredEvent | NewReader | None], None]


class Follow(Protocol):
    def close(self) -> None: ...


class ClusterHandlers(Protocol):
    """What the session manager does with what other replicas tell it."""

    def deliver(self, session_id: str, message: JsonObject) -> None:
        """A message for one of this replica's requests (the client's answer)."""

    def cancel(self, session_id: str, request_id: Any) -> None: ...

    def ended(self, session_id: str) -> None: ...

    def state(self, session_id: str, record: SessionRecord) -> None: ...

    def wanted(self, session_id: str) -> None:
        """Another replica lacks this session in the store (Redis came back empty): store
        it again if it is held here."""

    def recovered(self) -> None:
        """The store is back after an outage (perhaps empty): save what this replica holds."""


class SessionStore(Protocol):
    #: Whether other processes share these sessions (False: this process is alone).
    shared: bool
    #: Whether the store answers now (a shared store that cannot be reached: 503).
    available: bool
    #: This replica's residue among request ids (`JsonRpcPeer.number_ids`), and the stride.
    node: int
    stride: int

    async def start(self, handlers: ClusterHandlers) -> None: ...

    async def connected(self) -> None:
        """Return once the store has answered for the first time since `start`."""

    async def close(self) -> None: ...

    async def ping(self) -> bool: ...

    async def load(self, session_id: str) -> SessionRecord | None: ...

    async def save(
        self,
        session_id: str,
        record: SessionRecord,
        ttl: float,
        unsubscribed: list[str],
        announce: bool = True,
    ) -> None:
        """Store the session's state; `unsubscribed`: subscriptions it no longer has;
        `announce`: tell the other replicas (False: none can hold a copy yet)."""

    async def delete(self, session_id: str) -> None: ...

    def touch(self, session_id: str, ttl: float, initialized: bool) -> None: ...

    def append(self, session_id: str, stream: str, seq: int, data: bytes, final: bool) -> None:
        """Keep one event, after every event this replica appended before it (seq 0: the
        store numbers it: the standalone stream, which every replica writes to)."""

    async def written(self) -> None:
        """Wait until every event appended so far is stored (raises StoreUnavailable)."""

    async def events(self, session_id: str) -> tuple[list[StoredEvent], int]:
        """Every stored event of the session, oldest first, and the standalone stream's
        last seq."""

    async def follow(self, session_id: str, callback: EventCallback) -> Follow: ...

    async def replica_alive(self, node: int) -> bool:
        """Whether replica `node` (request ids and stream keys name it) still lives."""

    async def announce_reader(self, session_id: str, token: str) -> None:
        """Tell every follower of the session (after what was stored before) that a GET
        stream `token` opened."""

    def send_to(self, node: int, session_id: str, message: JsonObject) -> None: ...

    def broadcast_cancel(self, session_id: str, request_id: Any) -> None: ...


class MemoryStore:
    """The default: sessions live in this process alone, and nothing is shared."""

    shared = False
    available = True
    node = 0
    stride = 1

    async def start(self, handlers: ClusterHandlers) -> None:
        pass

    async def connected(self) -> None:
        pass

    async def close(self) -> None:
        pass

    async def ping(self) -> bool:
        return True

    async def load(self, session_id: str) -> SessionRecord | None:
        return None

    async def save(
        self,
        session_id: str,
        record: SessionRecord,
        ttl: float,
        unsubscribed: list[str],
        announce: bool = True,
    ) -> None:
        pass

    async def delete(self, session_id: str) -> None:
        pass

    def touch(self, session_id: str, ttl: float, initialized: bool) -> None:
        pass

    def append(self, session_id: str, stream: str, seq: int, data: bytes, final: bool) -> None:
        pass

    async def written(self) -> None:
        pass

    async def events(self, session_id: str) -> tuple[list[StoredEvent], int]:
        return [], 0

    async def follow(self, session_id: str, callback: EventCallback) -> Follow:
        raise NotImplementedError("a memory store has nobody to follow")

    async def replica_alive(self, node: int) -> bool:
        return node == self.node

    async def announce_reader(self, session_id: str, token: str) -> None:
        pass

    def send_to(self, node: int, session_id: str, message: JsonObject) -> None:
        pass

    def broadcast_cancel(self, session_id: str, request_id: Any) -> None:
        pass


__all__ = [
    "OPENED",
    "ClusterHandlers",
    "EventCallback",
    "Follow",
    "MemoryStore",
    "SessionRecord",
    "SessionStore",
    "StoredEvent",
]
