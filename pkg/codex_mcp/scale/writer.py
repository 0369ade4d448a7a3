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
from redis.exceptions import NoScriptError, RedisError

from ..transports.http.errors import StoreUnavailable
from .records import key_of

log = logging.getLogger("codex_mcp.scale")

# KEYS: events, counter. ARGV: maxlen, ttl, channel, stream, seq (0: number it), final, data.
# Numbering, storing and publishing in one script keeps the three in one order.
_APPEND: Final = """
local seq = ARGV[5]
if seq == '0' then
  seq = tostring(redis.call('INCR', KEYS[2]))
  redis.call('EXPIRE', KEYS[2], ARGV[2])
end
local id = redis.call('XADD', KEYS[1], 'MAXLEN', ARGV[1], '*',
  'k', ARGV[4], 's', seq, 'f', ARGV[6], 'd', ARGV[7])
redis.call('EXPIRE', KEYS[1], ARGV[2])
redis.call('PUBLISH', ARGV[3], 'E ' .. id .. ' ' .. ARGV[4] .. ' ' .. seq .. ' ' .. ARGV[6] .. ' ' .. ARGV[7])
return id
"""


class OrderedWriter:
    def __init__(
        self,
        redis: Redis,
        replay_events: int,
        session_ttl: int,
        mark_down: Callable[[BaseException], None],
    ) -> None:
        # EVALSHA, and the script loaded again when Redis says NOSCRIPT (it restarted): a
        # pipelined Script would ask SCRIPT EXISTS before every pipeline.
        self._append_sha = hashlib.sha1(_APPEND.encode()).hexdigest()
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
        pipe.evalsha(
            self._append_sha,
            2,
            key_of("e", session_id),
            key_of("q", session_id),
            self._replay_events,
            self._session_ttl,
            key_of("ev", session_id),
            stream,
            seq,
            "1" if final else "0",
            data,
        )

    async def _drain(self) -> None:
        """Every write, in order, a pipeline at a time."""
        barriers: list[asyncio.Future[None]] = []
        while self._writes:
            pipe = self._redis.pipeline(transaction=False)
            appends: list[tuple[int, tuple[Any, ...]]] = []  # (position, args)
            for _ in range(min(256, len(self._writes))):
                kind, args = self._writes.popleft()
                if kind == "append":
                    appends.append((len(pipe), args))
                    self._queue_append(pipe, args)
                elif kind == "set":
                    pipe.set(args[0], args[1], px=args[2])
                elif kind == "barrier":
                    barriers.append(args[0])
                else:
                    pipe.publish(*args)
            try:
                results = await pipe.execute(raise_on_error=False)
                await self._again_without_script(results, appends)
            except (RedisError, OSError) as exc:
                self._mark_down(exc)
                log.warning("events lost while Redis is unreachable: %s", exc)
                for barrier in barriers:
                    if not barrier.done():
                        barrier.set_exception(StoreUnavailable(str(exc)))
            else:
                for barrier in barriers:
                    if not barrier.done():
                        barrier.set_result(None)
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
        await self._redis.script_load(_APPEND)
        pipe = self._redis.pipeline(transaction=False)
        for args in refused:
            self._queue_append(pipe, args)
        await pipe.execute()


__all__ = ["OrderedWriter"]
