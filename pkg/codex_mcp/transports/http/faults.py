"""Faults that repeat in a tight loop, logged once: when they start, a reminder at most
once a minute while they last, when they are over."""

from __future__ import annotations

import asyncio
import errno
import logging
import time
from collections.abc import Callable
from typing import Any, Final

log = logging.getLogger("codex_mcp.http")

#: Errors of accept() that mean "out of descriptors or memory", not "bad connection".
_RESOURCE_ERRNOS: Final = frozenset({errno.EMFILE, errno.ENFILE, errno.ENOBUFS, errno.ENOMEM})


class FaultLog:
    """One log line when a recurring fault starts, a reminder at most every `interval`
    seconds while it lasts, one line when it is over (`ok()` after `quiet` seconds
    without it). A fault that repeats in a tight loop (accept() under EMFILE) then
    costs a few lines, not one per retry."""

    def __init__(self, what: str, interval: float = 60.0, quiet: float = 2.0) -> None:
        self.what = what
        self.interval = interval
        self.quiet = quiet
        self.count = 0
        self._first = self._last = self._next_report = 0.0

    def __call__(self, detail: str) -> None:
        now = time.monotonic()
        if self.count == 0:
            self._first = now
            log.error("%s: %s (said once while it lasts)", self.what, detail)
            self._next_report = now + self.interval
        elif now >= self._next_report:
            log.error(
                "%s: still, %d times in %.0f s: %s",
                self.what,
                self.count,
                now - self._first,
                detail,
            )
            self._next_report = now + self.interval
        self.count += 1
        self._last = now

    def ok(self) -> None:
        """The thing that failed worked: the fault is over if it has been quiet a while."""
        if self.count and time.monotonic() - self._last >= self.quiet:
            log.warning(
                "%s: over after %d time(s) in %.1f s",
                self.what,
                self.count,
                self._last - self._first,
            )
            self.count = 0


def watch_accept_faults(loop: asyncio.AbstractEventLoop, faults: FaultLog) -> Callable[[], None]:
    """Route the loop's reports of accept() failing for lack of descriptors or memory
    (asyncio reports every retry) to `faults`; everything else goes where it went.
    Returns the function that undoes this."""
    previous = loop.get_exception_handler()

    def handle(loop: asyncio.AbstractEventLoop, context: dict[str, Any]) -> None:
        exc = context.get("exception")
        if isinstance(exc, OSError) and exc.errno in _RESOURCE_ERRNOS:
            faults(f"{context.get('message', 'error')}: {exc.strerror}")
        elif previous is not None:
            previous(loop, context)
        else:
            loop.default_exception_handler(context)

    loop.set_exception_handler(handle)
    return lambda: loop.set_exception_handler(previous)
