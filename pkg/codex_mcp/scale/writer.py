"""One ordered, pipelined writer per replica: events, mirrored tasks, bus messages, stored
in the order they happened; nobody awaits a write but through a barrier (specs/scale.md,
"The hot path stays in memory")."""

from __future__ import annotations

import asyncio
import collections
import hashlib
import logging
from collections.abc import Callable
from typing import Any, Final

from redis.asyncio import Redis
from redis.exceptions import NoScriptError

from ..transports.http.errors import StoreUnavailable
from .backends import FAILURES
from .records import Keys
from .replication import Replication

log = logging.getLogger("codex_mcp.scale")

# KEYS: events, counter, channel. ARGV: maxlen, ttl, stream, seq (0: number it), final, data.
# Numbering, storing and publishing in one script keeps the three in one order. The channel
# is a key too: in a Cluster it is the session's shard channel, in the same slot (SPUBLISH).
_APPEND: Final = """
local seq = ARGV[4]
if seq == '0' then
  seq = tostring(redis.call('INCR', KEYS[2]))
  redis.call('EXPIRE', KEYS[2], ARGV[2])
end
local id = redis.call('XADD', KEYS[1], 'MAXLEN', ARGV[1], '*',
  'k', ARGV[3], 's', seq, 'f', ARGV[5], 'd', ARGV[6])
redis.call('EXPIRE', KEYS[1], ARGV[2])
redis.call('PUBLISH', KEYS[3], 'E ' .. id .. ' ' .. ARGV[3] .. ' ' .. seq .. ' ' .. ARGV[5] .. ' ' .. ARGV[6])
return id
"""


class OrderedWriter:
    def __init__(
        self,
        redis: Redis,
        keys: Keys,
        replay_events: int,
        session_ttl: int,
        mark_down: Callable[[BaseException], None],
        replication: Replication,
    ) -> None:
        # EVALSHA, and the script loaded again when Redis says NOSCRIPT (it restarted): a
        # pipelined Script would ask SCRIPT EXISTS before every pipeline.
        self._append = _APPEND.replace("'PUBLISH'", "'SPUBLISH'") if keys.tagged else _APPEND
        self._append_sha = hashlib.sha1(self._append.encode()).hexdigest()
        self._keys = keys
        self._replication = replication
        self._redis = redis
        self._replay_events = replay_events
        self._session_ttl = session_ttl
        self._mark_down = mark_down
        self._writes: collections.deque[tuple[str, tuple[Any, ...]]] = collections.deque()
        self._task: asyncio.Task[None] | None = None

    def close(self) -> None:
        if self._task is not None:
            self._task.cancel()

    def write(self, kind: str, args: tuple[Any, ...]) -> None:
        self._writes.append((kind, args))
        if self._task is None or self._task.done():
            self._task = asyncio.ensure_future(self._drain())

    def _queue_append(self, pipe: Any, args: tuple[Any, ...]) -> None:
        session_id, stream, seq, data, final = args
        keys = self._keys
        pipe.evalsha(
            self._append_sha,
            3,
            keys.session("e", session_id),
            keys.session("q", session_id),
            keys.session("ev", session_id),
            self._replay_events,
            self._session_ttl,
            stream,
            seq,
            "1" if final else "0",
            data,
        )

    async def _drain(self) -> None:
        """Every write, in order, a pipeline at a time; when a barrier (or an event) in it
        waits for a replica, the pipeline ends with WAIT on each primary it wrote to, on
        the connection that wrote there."""
        barriers: list[asyncio.Future[bool]] = []
        while self._writes:
            pipe = self._redis.pipeline(transaction=False)
            appends: list[tuple[int, tuple[Any, ...]]] = []  # (position, args)
            published: list[tuple[Any, ...]] = []  # a Cluster's: after the pipeline
            written: list[str] = []  # the keys it writes
            waiting: set[str] = set()  # the kinds of writes that wait for a replica
            for _ in range(min(256, len(self._writes))):
                kind, args = self._writes.popleft()
                if kind == "append":
                    appends.append((len(pipe), args))
                    self._queue_append(pipe, args)
                    written.append(self._keys.session("e", args[0]))
                    waiting.add("events")
                elif kind == "set":
                    pipe.set(args[0], args[1], px=args[2])
                    written.append(args[0])
                elif kind == "barrier":
                    barriers.append(args[0])
                    waiting.add(args[1])
                elif self._keys.tagged:
                    published.append(args)
                else:
                    pipe.publish(*args)
            waiting = {kind for kind in waiting if self._replication.waits(kind)}
            waited = self._replication.wait_on(pipe, written) if waiting else 0
            try:
                results = await pipe.execute(raise_on_error=False)
                await self._again_without_script(results, appends)
                for channel, message in published:  # in order
                    await self._redis.publish(channel, message)
            except FAILURES as exc:
                self._mark_down(exc)
                log.warning("events lost while Redis is unreachable: %s", exc)
                for barrier in barriers:
                    if not barrier.done():
                        barrier.set_exception(StoreUnavailable(str(exc)))
            else:
                what = ", ".join(sorted(waiting))
                held = self._replication.held(results, waited, "writes of", what)
                for barrier in barriers:
                    if not barrier.done():
                        barrier.set_result(held)
            barriers.clear()

    async def _again_without_script(
        self, results: list[Any], appends: list[tuple[int, tuple[Any, ...]]]
    ) -> None:
        """Redis lost the script (it restarted): load it and append what it refused, in
        order. Any other error of a command is a bug of ours: raised."""
        refused = [args for at, args in appends if isinstance(results[at], NoScriptError)]
        failed = [
            r for r in results if isinstance(r, Exception) and not isinstance(r, NoScriptError)
        ]
        if failed:
            raise failed[0]
        if not refused:
            return
        await self._redis.script_load(self._append)
        pipe = self._redis.pipeline(transaction=False)
        for args in refused:
            self._queue_append(pipe, args)
        await pipe.execute()


__all__ = ["OrderedWriter"]
