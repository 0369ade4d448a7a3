"""A child's lane: its second connection, greeted with `server/discover` alone, that serves its
2026-07-28 fronts when the child was greeted with `initialize` (a dual-revision child: its own
input-required rounds, tasks and results then reach those fronts as it makes them; decision
68). Opened at the first need, again after it dies, closed with its child's connection. A child
that refuses `server/discover` there is asked in the legacy revision by every front from then
on; learning that is no failure, and is logged at debug level only."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable

from .connection import Connection, StartFailed

log = logging.getLogger("codex_mcp.gateway")


class Lane:
    def __init__(self, name: str, connect: Callable[[], Awaitable[Connection]]) -> None:
        self.name = name
        self._connect = connect
        #: The lane while it is open.
        self.connection: Connection | None = None
        #: Does the child speak 2026-07-28 there (None: not asked yet)?
        self.speaks: bool | None = None
        self._opening: asyncio.Future[Connection | None] | None = None
        self._closing: asyncio.Task[None] | None = None

    async def open(self, main: Connection, current: Callable[[], Connection | None]) -> Connection:
        """The lane beside `main` (the child's connection, while `current()` is it), opened
        now if it is not; `main` itself when the child does not speak 2026-07-28."""
        lane = self.connection
        if lane is None or lane.session.closed:
            opening = self._opening
            if opening is None:
                opening = self._opening = asyncio.ensure_future(self._open(main, current))
            lane = await asyncio.shield(opening)
        return lane if lane is not None and current() is main else main

    async def _open(
        self, main: Connection, current: Callable[[], Connection | None]
    ) -> Connection | None:
        await self.close()  # one that died
        try:
            lane = await self._connect()
        except StartFailed as failure:
            if self.speaks is None:  # it never did: the legacy revision for all
                self.speaks = False
                log.debug(
                    "%s: does not answer server/discover (%s): its 2026-07-28 fronts are "
                    "served in the legacy revision", self.name, failure.error["message"],
                )  # fmt: skip
            return None
        finally:
            self._opening = None
        if current() is not main:  # stopped meanwhile: nothing to serve
            await lane.close()
            return None
        self.connection, self.speaks = lane, True
        return lane

    async def close(self) -> None:
        lane, self.connection = self.connection, None
        closing = self._closing
        if lane is not None:
            await lane.close()
        if closing is not None:
            await closing

    def closed(self) -> None:
        """Its connection ended (the lane died): closed now, the next need opens another."""
        lane = self.connection
        if lane is not None and lane.session.closed and self._closing is None:
            self.connection = None
            self._closing = asyncio.get_running_loop().create_task(lane.close())
            self._closing.add_done_callback(lambda _task: setattr(self, "_closing", None))
