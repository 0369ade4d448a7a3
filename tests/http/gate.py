"""A `block` tool that holds every call until the test opens the gate, and tells the test
when each call has started: calls in flight on demand, without sleeps."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable
from typing import TypeVar

from codex_mcp import Server
from http_helpers import build_test_server

T = TypeVar("T")


class Gate:
    def __init__(self) -> None:
        self.started = 0
        self.open = asyncio.Event()
        self._changed = asyncio.Condition()

    def server(self) -> Server:
        """The test server's tools, plus `block`."""
        server = build_test_server()

        @server.tool(read_only=True)
        async def block() -> str:
            async with self._changed:
                self.started += 1
                self._changed.notify_all()
            await self.open.wait()
            return "released"

        return server

    async def until_started(self, calls: int, timeout: float = 10) -> None:
        async with asyncio.timeout(timeout), self._changed:
            await self._changed.wait_for(lambda: self.started >= calls)

    async def hold(self, *requests: Awaitable[T]) -> list[asyncio.Task[T]]:
        """Send requests that call `block`; return once they have all started."""
        before = self.started
        tasks = [asyncio.ensure_future(request) for request in requests]
        await self.until_started(before + len(tasks))
        return tasks
