"""Backoff between call_tool attempts (specs/client.md, "Retries")."""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Awaitable, Callable

Backoff = Callable[[int], float | Awaitable[float | None] | None]

BASE_DELAY = 0.1
MAX_DELAY = 5.0


def exponential_backoff(attempt: int) -> float:
    """100 ms, 200 ms, 400 ms, ... doubling up to 5 s."""
    return float(min(BASE_DELAY * 2 ** max(attempt - 1, 0), MAX_DELAY))


async def wait_before_retry(backoff: Backoff | None, attempt: int) -> None:
    if backoff is None:
        return
    delay = backoff(attempt)
    if inspect.isawaitable(delay):
        delay = await delay
    if delay:
        await asyncio.sleep(float(delay))
