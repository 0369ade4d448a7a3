"""Redis pub/sub for a replica, shared by everything that listens: one connection for the
general channels, and in a Cluster one more per node that owns a followed session's slot
(sharded pub/sub). `subscribe` returns once Redis confirmed it; a lost connection is told
to each of its listeners (None) (specs/scale.md, "Streams and resumption across replicas")."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable
from typing import Any

from .backends import FAILURES, Backend

log = logging.getLogger("codex_mcp.scale")

#: The channel every replica hears (its node holds the general connection in a Cluster).
GENERAL = "codex-mcp:bus"
#: Called with each message's data, or None when the connection was lost.
Listener = Callable[[bytes | None], None]


class Bus:
    def __init__(self, backend: Backend, on_down: Callable[[Exception], None]) -> None:
        self._backend = backend
        self._on_down = on_down
        self._lines: dict[str, _Line] = {}
        self._closed = False

    @property
    def connected(self) -> bool:
        return self._general().connected.is_set()

    def _general(self) -> _Line:
        line = self._lines.get("")
        if line is None:
            line = _Line(self._backend, GENERAL, False, self._on_down, keep=True)
            self._lines[""] = line
        return line

    async def start(self) -> None:
        self._general().start()

    async def close(self) -> None:
        self._closed = True
        for line in list(self._lines.values()):
            await line.close()

    async def subscribe(self, channel: str, listener: Listener, timeout: float = 2.0) -> None:
        """Listen on `channel`; returns when Redis confirmed it (raises if it cannot)."""
        name = self._backend.line_name(channel)
        line = self._lines.get(name)
        if line is None or line.ended:
            line = self._lines[name] = _Line(self._backend, channel, True, self._on_down)
            line.start()
        await line.subscribe(channel, listener, timeout)

    def unsubscribe(self, channel: str, listener: Listener) -> None:
        for line in self._lines.values():
            line.unsubscribe(channel, listener)


class _Line:
    """One pub/sub connection and its channels; it connects again after a loss while it
    has channels (the general line: always)."""

    def __init__(
        self,
        backend: Backend,
        channel: str,
        sharded: bool,
        on_down: Callable[[Exception], None],
        keep: bool = False,
    ) -> None:
        self._backend = backend
        self._channel = channel  # one of its channels: where to connect (a Cluster node)
        self._sharded = sharded
        self._on_down = on_down
        self._keep = keep
        self._listeners: dict[bytes, list[Listener]] = {}
        self._confirmations: dict[bytes, asyncio.Future[None]] = {}
        self._pubsub: Any = None
        self._reader: asyncio.Task[None] | None = None
        self.connected = asyncio.Event()
        self.ended = False
        self._tasks: set[asyncio.Task[None]] = set()

    def start(self) -> None:
        self._reader = asyncio.get_running_loop().create_task(self._run())

    async def close(self) -> None:
        self.ended = True
        if self._reader is not None:
            self._reader.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._reader
        if self._pubsub is not None:
            with contextlib.suppress(Exception):
                await self._pubsub.aclose()

    async def subscribe(self, channel: str, listener: Listener, timeout: float) -> None:
        name = channel.encode()
        listeners = self._listeners.setdefault(name, [])
        listeners.append(listener)
        if len(listeners) > 1 and name not in self._confirmations:
            return  # already subscribed
        try:
            await asyncio.wait_for(self._confirm(name), timeout)
        except (TimeoutError, *FAILURES):
            self.unsubscribe(channel, listener)
            raise

    async def _confirm(self, name: bytes) -> None:
        await self.connected.wait()
        confirmation = self._confirmations.get(name)
        if confirmation is None:
            confirmation = asyncio.get_running_loop().create_future()
            self._confirmations[name] = confirmation
            await self._subscribe(name)
        await asyncio.shield(confirmation)

    async def _subscribe(self, *names: bytes) -> None:
        if self._sharded:
            await self._pubsub.ssubscribe(*names)
        else:
            await self._pubsub.subscribe(*names)

    def unsubscribe(self, channel: str, listener: Listener) -> None:
        name = channel.encode()
        listeners = self._listeners.get(name)
        if listeners is None:
            return
        with contextlib.suppress(ValueError):
            listeners.remove(listener)
        if not listeners:
            del self._listeners[name]
            if self._pubsub is not None and self.connected.is_set():
                leave = self._pubsub.sunsubscribe if self._sharded else self._pubsub.unsubscribe
                self._spawn(leave(name))

    def _spawn(self, work: Any) -> None:
        task = asyncio.ensure_future(self._quietly(work))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    @staticmethod
    async def _quietly(work: Any) -> None:
        with contextlib.suppress(*FAILURES):
            await work

    async def _run(self) -> None:
        delay = 0.1
        while not self.ended:
            try:
                await self._backend.start()  # a Cluster's slots, learnt again
                self._pubsub = self._backend.line(self._channel).pubsub()
                channels = list(self._listeners)
                if channels:
                    await self._subscribe(*channels)
                else:
                    await self._pubsub.ping()  # connects, so a dead Redis is found now
                self.connected.set()
                delay = 0.1
                await self._read()
            except asyncio.CancelledError:
                raise
            except FAILURES as exc:
                self._lost(exc)
                if not self._keep and not self._listeners:
                    self.ended = True  # a node's line with nothing left to follow
                    return
                await asyncio.sleep(delay)
                delay = min(delay * 2, 0.5)  # back soon after Redis is

    async def _read(self) -> None:
        while True:
            message = await self._pubsub.get_message(timeout=5.0)
            if message is None:
                continue
            kind, channel = message["type"], message["channel"]
            if kind in ("subscribe", "ssubscribe"):
                confirmation = self._confirmations.pop(channel, None)
                if confirmation is not None and not confirmation.done():
                    confirmation.set_result(None)
            elif kind in ("message", "smessage"):
                self._tell(channel, message["data"])
            elif kind == "sunsubscribe" and channel in self._listeners:
                # The node gave the slot away (a failover, a resharding): what is published
                # now goes elsewhere. Its followers end, and resume from the store.
                for listener in self._listeners.pop(channel):
                    self._call(listener, None)

    def _tell(self, channel: bytes, data: bytes | None) -> None:
        for listener in list(self._listeners.get(channel, ())):
            self._call(listener, data)

    @staticmethod
    def _call(listener: Listener, data: bytes | None) -> None:
        try:
            listener(data)
        except Exception:
            log.exception("a bus listener failed")

    def _lost(self, exc: Exception) -> None:
        if self.connected.is_set():
            log.warning("lost a Redis pub/sub connection: %s; reconnecting", exc)
        self.connected.clear()
        self._on_down(exc)
        for confirmation in self._confirmations.values():
            if not confirmation.done():
                confirmation.set_exception(ConnectionError("Redis pub/sub connection lost"))
        self._confirmations.clear()
        # Whatever was published while we were away is lost to live listeners: tell them,
        # so a stream reader ends and its client resumes from the stored events.
        for channel in list(self._listeners):
            self._tell(channel, None)
        if self._pubsub is not None:
            pubsub, self._pubsub = self._pubsub, None
            self._spawn(pubsub.aclose())


__all__ = ["Bus", "Listener"]
