"""One Redis pub/sub connection per replica, shared by everything that listens; `subscribe`
returns once Redis confirmed it, and a lost connection is told to every listener (None)
(specs/scale.md, "Streams and resumption across replicas")."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable
from typing import Any

from redis.asyncio import Redis
from redis.exceptions import RedisError

log = logging.getLogger("codex_mcp.scale")

#: Called with each message's data, or None when the connection was lost.
Listener = Callable[[bytes | None], None]


class Bus:
    def __init__(self, redis: Redis, on_down: Callable[[Exception], None]) -> None:
        self._redis = redis
        self._on_down = on_down
        self._listeners: dict[bytes, list[Listener]] = {}
        self._confirmations: dict[bytes, asyncio.Future[None]] = {}
        self._pubsub: Any = None
        self._reader: asyncio.Task[None] | None = None
        self._connected = asyncio.Event()
        self._tasks: set[asyncio.Task[None]] = set()

    @property
    def connected(self) -> bool:
        return self._connected.is_set()

    async def start(self) -> None:
        self._reader = asyncio.get_running_loop().create_task(self._run())

    async def close(self) -> None:
        if self._reader is not None:
            self._reader.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._reader
        if self._pubsub is not None:
            with contextlib.suppress(Exception):
                await self._pubsub.aclose()

    async def subscribe(self, channel: str, listener: Listener, timeout: float = 2.0) -> None:
        """Listen on `channel`; returns when Redis confirmed it (raises if it cannot)."""
        name = channel.encode()
        listeners = self._listeners.setdefault(name, [])
        listeners.append(listener)
        if len(listeners) > 1 and name not in self._confirmations:
            return  # already subscribed
        try:
            await asyncio.wait_for(self._confirm(name), timeout)
        except (TimeoutError, RedisError, OSError):
            self.unsubscribe(channel, listener)
            raise

    async def _confirm(self, name: bytes) -> None:
        await self._connected.wait()
        confirmation = self._confirmations.get(name)
        if confirmation is None:
            confirmation = asyncio.get_running_loop().create_future()
            self._confirmations[name] = confirmation
            await self._pubsub.subscribe(name)
        await asyncio.shield(confirmation)

    def unsubscribe(self, channel: str, listener: Listener) -> None:
        name = channel.encode()
        listeners = self._listeners.get(name)
        if listeners is None:
            return
        with contextlib.suppress(ValueError):
            listeners.remove(listener)
        if not listeners:
            del self._listeners[name]
            if self._pubsub is not None and self._connected.is_set():
                self._spawn(self._pubsub.unsubscribe(name))

    def _spawn(self, work: Any) -> None:
        task = asyncio.ensure_future(self._quietly(work))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    @staticmethod
    async def _quietly(work: Any) -> None:
        with contextlib.suppress(RedisError, OSError):
            await work

    async def _run(self) -> None:
        delay = 0.1
        while True:
            try:
                self._pubsub = self._redis.pubsub()
                channels = list(self._listeners)
                if channels:
                    await self._pubsub.subscribe(*channels)
                else:
                    await self._pubsub.ping()  # connects, so a dead Redis is found now
                self._connected.set()
                delay = 0.1
                await self._read()
            except asyncio.CancelledError:
                raise
            except (RedisError, OSError) as exc:
                self._lost(exc)
                await asyncio.sleep(delay)
                delay = min(delay * 2, 0.5)  # back soon after Redis is

    async def _read(self) -> None:
        while True:
            message = await self._pubsub.get_message(timeout=5.0)
            if message is None:
                continue
            kind, channel = message["type"], message["channel"]
            if kind == "subscribe":
                confirmation = self._confirmations.pop(channel, None)
                if confirmation is not None and not confirmation.done():
                    confirmation.set_result(None)
            elif kind == "message":
                for listener in list(self._listeners.get(channel, ())):
                    try:
                        listener(message["data"])
                    except Exception:
                        log.exception("a bus listener failed")

    def _lost(self, exc: Exception) -> None:
        if self._connected.is_set():
            log.warning("lost the Redis pub/sub connection: %s; reconnecting", exc)
        self._connected.clear()
        self._on_down(exc)
        for confirmation in self._confirmations.values():
            if not confirmation.done():
                confirmation.set_exception(ConnectionError("Redis pub/sub connection lost"))
        self._confirmations.clear()
        # Whatever was published while we were away is lost to live listeners: tell them,
        # so a stream reader ends and its client resumes from the stored events.
        for listeners in list(self._listeners.values()):
            for listener in list(listeners):
                with contextlib.suppress(Exception):
                    listener(None)
        if self._pubsub is not None:
            pubsub, self._pubsub = self._pubsub, None
            self._spawn(pubsub.aclose())


__all__ = ["Bus", "Listener"]
