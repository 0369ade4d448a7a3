"""Flow: whether the client side can take more messages now; paused by a stdio writer over its
bound, awaited by a relay before each read (decision 34; specs/isolation.md, "Clients that do
not read")."""

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
