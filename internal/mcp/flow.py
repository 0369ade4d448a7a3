"""Flow: whether the client side can take more messages now.

A transport whose writer is over its bound (a stdio client that stopped reading) pauses the
core's flow; something that reads an upstream on the client's behalf (the gateway reading a
child's stdout) awaits `writable()` before each read, so it reads no faster than the client
takes what it relays. Transports with a queue per client (HTTP) never pause it: one slow
client must not stall the others; their queues shed instead (transports/backpressure.py).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable


class Flow:
    __slots__ = ("_resumed",)

    def __init__(self) -> None:
        self._resumed: asyncio.Event | None = None  # None: not paused

    @property
    def paused(self) -> bool:
        return self._resumed is not None

    def pause(self) -> None:
        if self._resumed is None:
            self._resumed = asyncio.Event()

    def resume(self) -> None:
        resumed, self._resumed = self._resumed, None
        if resumed is not None:
            resumed.set()

    def writable(self) -> Awaitable[bool] | None:
        """None when the client can take more now, else something to await until it can."""
        resumed = self._resumed
        return None if resumed is None else resumed.wait()
