"""Wait on a condition with a deadline (never a fixed sleep): for state only a peer can tell."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import Any


def _timed_out(timeout: float, what: object) -> AssertionError:
    said = what() if callable(what) else what
    return AssertionError(f"not met in {timeout} s: {said if said is not None else 'a condition'}")


async def until(
    check: Callable[[], Any], timeout: float = 30.0, what: object = None, *, every: float = 0.05
) -> Any:
    """Poll `check` (sync, or returning an awaitable) until its value is truthy, and return
    that value. After `timeout` seconds fail with AssertionError naming `what` (shown as it is
    then; a callable is called then, e.g. `lambda: server.stderr`)."""
    limit = asyncio.timeout(timeout)  # also bounds a check that itself hangs
    try:
        async with limit:
            while True:
                value = check()
                if asyncio.iscoroutine(value) or asyncio.isfuture(value):
                    value = await value
                if value:
                    return value
                await asyncio.sleep(every)
    except TimeoutError:
        if not limit.expired():
            raise  # the check's own timeout: its error, not ours
        raise _timed_out(timeout, what) from None


def until_sync(
    check: Callable[[], Any], timeout: float = 30.0, what: object = None, *, every: float = 0.05
) -> Any:
    """`until` for tests without an event loop: the same contract, polling with time.sleep."""
    deadline = time.monotonic() + timeout
    while not (value := check()):
        if time.monotonic() >= deadline:
            raise _timed_out(timeout, what)
        time.sleep(every)
    return value
