"""One session's Codex: its app-server, started on first use, started again if it died,
stopped when the session ends; `AppServerLimit` caps them (specs/codex-tools.md, "Sessions")."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable

from ..session_logs import SESSION
from .driver import CodexDriver
from .errors import AppServerGone, TooManyAppServers

log = logging.getLogger("codex_mcp.codex")

Spawn = Callable[[], Awaitable[CodexDriver]]


class AppServerLimit:
    """Live app-servers across the sessions of one provider, against the cap."""

    __slots__ = ("live", "maximum")

    def __init__(self, maximum: int) -> None:
        if maximum < 1:
            raise ValueError("the app-server cap must be at least 1")
        self.maximum = maximum
        self.live = 0

    def take(self) -> None:
        if self.live >= self.maximum:
            raise TooManyAppServers(
                f"Codex is not available to this session right now: {self.maximum} Codex "
                f"app-servers are already running, one for each MCP session that called a "
                f"codex tool (the server's cap: --codex-max-app-servers, "
                f"CODEX_MCP_CODEX_MAX_APP_SERVERS). Try again once a session has ended "
                f"(a DELETE ends one at once; idle sessions expire)."
            )
        self.live += 1

    def give_back(self) -> None:
        self.live -= 1


class SessionCodex:
    def __init__(self, spawn: Spawn, limit: AppServerLimit, label: str | None = None) -> None:
        #: The session's name in log lines (its HTTP session id).
        self.label = label
        self._spawn = spawn
        self._limit = limit
        self._driver: CodexDriver | None = None
        self._starting: asyncio.Task[CodexDriver] | None = None
        self.closed = False

    @property
    def current(self) -> CodexDriver | None:
        """The live driver, if one is running now (nothing is started)."""
        driver = self._driver
        return driver if driver is not None and driver.gone is None else None

    async def driver(self) -> CodexDriver:
        """The session's driver, started (or restarted) if need be. Raises CodexUnavailable,
        TooManyAppServers, or AppServerGone once the session has ended."""
        if self.closed:
            raise AppServerGone("the MCP session has ended")
        driver = self.current
        if driver is not None:
            return driver
        starting = self._starting
        if starting is None:
            starting = self._starting = asyncio.get_running_loop().create_task(
                self._start(self._driver)
            )
            starting.add_done_callback(_retrieve)
        try:
            return await asyncio.shield(starting)
        except asyncio.CancelledError:
            task = asyncio.current_task()
            if task is not None and task.cancelling():
                raise  # the call itself was cancelled; the start goes on without it
            raise AppServerGone(
                "the MCP session ended while its Codex app-server was starting"
            ) from None

    async def _start(self, dead: CodexDriver | None) -> CodexDriver:
        try:
            if dead is not None:
                self._driver = None
                await dead.close()  # whatever is left of it (a Node wrapper's child)
            self._limit.take()
            started = time.monotonic()
            try:
                driver = await self._spawn()
            except BaseException:
                self._limit.give_back()
                raise
            self._account(driver, time.monotonic() - started)
            if self.closed:
                await driver.close()
                raise AppServerGone("the MCP session has ended")
            self._driver = driver
            return driver
        finally:
            self._starting = None

    def _account(self, driver: CodexDriver, took: float) -> None:
        """Log the start, and give the slot back when the app-server stops for any reason."""
        pid = getattr(driver.connection, "pid", None)
        limit = self._limit
        log.info(
            "Codex app-server started (pid %s) in %.0f ms; %d of %d running",
            pid, took * 1000, limit.live, limit.maximum,
        )  # fmt: skip
        released = False

        def stopped(reason: str) -> None:
            nonlocal released
            if released:
                return
            released = True
            limit.give_back()
            log.info(
                "Codex app-server stopped (pid %s): %s; %d of %d running",
                pid, reason, limit.live, limit.maximum,
            )  # fmt: skip

        driver.connection.on_close(stopped)

    async def close(self) -> None:
        """Stop the session's app-server (a start under way is cancelled)."""
        self.closed = True
        # The session's teardown runs in a task of the server's: name the session here.
        tag = SESSION.set(self.label)
        try:
            starting = self._starting
            if starting is not None:
                starting.cancel()
                await asyncio.wait([starting])
            driver, self._driver = self._driver, None
            if driver is not None:
                await driver.close()
        finally:
            SESSION.reset(tag)


def _retrieve(task: asyncio.Task[CodexDriver]) -> None:
    """Read a start's outcome, so a failure nobody waited for is not reported as lost."""
    if not task.cancelled():
        task.exception()
