"""GET /mcp, and resumption, for a session replicas share: its events come from the shared
store, each once and in order (specs/scale.md, "Streams and resumption across replicas")."""

from __future__ import annotations

import asyncio
import secrets
from typing import Final

import orjson
from aiohttp import web

from ...core.jsonrpc import INTERNAL_ERROR
from ...core.versions import V2025_11_25
from . import sse
from .config import HttpConfig
from .errors import StoreUnavailable, error_response
from .exchange import SESSION_HEADER
from .sessions import HttpSession
from .store import OPENED, NewReader, SessionStore, StoredEvent
from .streams import STANDALONE, TICK, Ticker

#: What the reader's queue carries: an event, a keepalive tick, or None (the end).
_Item = StoredEvent | NewReader | tuple[str, bytes] | None
#: Put on the reader's queue when the replica running the call is gone.
_GONE: Final = ("", b"gone")
#: How often a resumed call's replica is checked, and how long its heartbeat may be
#: missing (a Redis that just restarted empty has none yet) before the call counts as lost.
_CHECK_EVERY: Final = 1.0
_GONE_AFTER: Final = 3.5


def _replica_stream(key: str) -> bool:
    """A request stream key minted by a replica sharing the store (`<replica><9 digits>`):
    its call may still be running there, even before it stored an event."""
    return len(key) > 9


def _replica_of(key: str) -> int:
    return int(key[:-9])


async def _watch_replica(store: SessionStore, node: int, queue: asyncio.Queue[_Item]) -> None:
    """Put _GONE on the queue once replica `node`'s heartbeat has been missing a while."""
    missing_since: float | None = None
    loop = asyncio.get_running_loop()
    while True:
        await asyncio.sleep(_CHECK_EVERY)
        try:
            alive = await store.replica_alive(node)
        except StoreUnavailable:
            missing_since = None  # Redis is down: that says nothing about the replica
            continue
        if alive:
            missing_since = None
        elif missing_since is None:
            missing_since = loop.time()
        elif loop.time() - missing_since >= _GONE_AFTER - _CHECK_EVERY:
            queue.put_nowait(_GONE)
            return


def _lost_call(request_id: object, node: int) -> bytes:
    message = {
        "jsonrpc": "2.0",
        "id": request_id,
        "error": {
            "code": INTERNAL_ERROR,
            "message": f"The server replica running this request (replica {node}) stopped "
            "before answering; its outcome is unknown: send it again if that is safe",
        },
    }
    return orjson.dumps(message)


def is_local(session: HttpSession, resume_from: tuple[str, int] | None) -> bool:
    """A request stream whose call ran here: its events, and their replay, are this
    replica's own."""
    return (
        resume_from is not None
        and resume_from[0] != STANDALONE
        and resume_from[0] in session.streams.by_key
    )


async def follow_stream(
    request: web.Request,
    session: HttpSession,
    resume_from: tuple[str, int] | None,
    config: HttpConfig,
) -> web.StreamResponse:
    streams = session.streams
    key, after = resume_from if resume_from is not None else (STANDALONE, None)
    standalone = streams.standalone
    if resume_from is None and standalone.queue is not None:
        return error_response(409, "Conflict: this session already has an open GET stream")
    store = session.store
    assert store is not None and session.id is not None
    queue: asyncio.Queue[_Item] = asyncio.Queue()
    follow = await store.follow(session.id, queue.put_nowait)
    ticker: Ticker | None = None
    watcher: asyncio.Future[None] | None = None
    reader, announced = secrets.token_hex(8), False
    following_standalone = key == STANDALONE
    if following_standalone:
        if standalone.queue is not None:
            standalone.queue.put_nowait(None)  # a newer reader replaces the old one
        standalone.queue = queue  # type: ignore[assignment]  # so the session's end ends it
    else:
        streams.follow(queue)  # type: ignore[arg-type]
    response = web.StreamResponse(headers={**sse.SSE_HEADERS, SESSION_HEADER: session.id})
    try:
        stored, standalone_seq = await store.events(session.id)
        watermark = stored[-1].entry if stored else (0, 0)
        missed = [e for e in stored if e.stream == key and after is not None and e.seq > after]
        if not following_standalone and not _replica_stream(key):
            # Not a stream of a replica sharing the store (an id of another server): the
            # standalone stream, as one process does for a stream it does not know.
            key, missed, following_standalone = STANDALONE, [], True
        if following_standalone:
            # One reader per session across the replicas: this one says so, and one that
            # opened before it, here or elsewhere, hears it and ends (the newest wins).
            await store.announce_reader(session.id, reader)
        await response.prepare(request)
        version = session.core_session.protocol_version or ""
        if version >= V2025_11_25 and not missed and resume_from is None:
            await response.write(sse.retry_hint(1000, f"{STANDALONE}_{standalone_seq}"))
        for event in missed:
            await response.write(sse.event(event.data, event.event_id))
            if event.final:
                return response
        if not following_standalone:
            node = _replica_of(key)
            opened = [e for e in stored if e.stream == key and e.seq == OPENED]
            request_id = orjson.loads(opened[0].data) if opened else None
            watcher = asyncio.ensure_future(_watch_replica(store, node, queue))
        ticker = Ticker(queue, config.keepalive_interval)
        while (item := await queue.get()) is not None:
            if item is TICK:
                await response.write(sse.KEEPALIVE)
            elif type(item) is NewReader:
                if item.token == reader:
                    announced = True
                elif announced and following_standalone:
                    session.log.info("a newer GET stream replaced this one")
                    break
            elif item is _GONE:
                session.log.warning("replica %d, running request %r, is gone", node, request_id)
                await response.write(sse.event(_lost_call(request_id, node), None))
                break
            elif (
                type(item) is StoredEvent
                and item.entry > watermark
                and item.stream == key
                and (after is None or item.seq > after)  # stored after we read: maybe seen
            ):
                await response.write(sse.event(item.data, item.event_id))
                if item.final:
                    break
    except (ConnectionError, asyncio.CancelledError):
        session.log.debug("GET stream closed by the client")
    finally:
        if ticker is not None:
            ticker.cancel()
        if watcher is not None:
            watcher.cancel()
        follow.close()
        if standalone.queue is queue:
            standalone.queue = None
        streams.unfollow(queue)  # type: ignore[arg-type]
    return response
