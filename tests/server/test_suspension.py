"""Which coroutine functions can never suspend (and so get answered inline)."""

from __future__ import annotations

import asyncio
import functools
from collections.abc import AsyncIterator
from typing import Any

import pytest
from codex_mcp.server.suspension import never_suspends, run_to_end


async def plain(x: int) -> int:
    return x * 2


async def awaits(x: int) -> int:
    await asyncio.sleep(0)
    return x


async def _numbers() -> AsyncIterator[int]:
    yield 1


async def iterates() -> int:
    return sum([n async for n in _numbers()])


async def loops() -> int:
    total = 0
    async for n in _numbers():
        total += n
    return total


async def enters() -> None:
    async with asyncio.timeout(1):  # noqa: ASYNC100  (entering alone is a suspension point)
        pass


async def awaits_only_in_a_nested_function() -> Any:
    async def inner() -> None:
        await asyncio.sleep(0)

    return inner  # the outer coroutine itself never suspends


def sync(x: int) -> int:
    return x


def wrapping(fn: Any) -> Any:
    @functools.wraps(fn)
    async def wrapper(*args: Any) -> Any:
        await asyncio.sleep(0)
        return await fn(*args)

    return wrapper


class AsyncCallable:
    async def __call__(self) -> str:
        return "called"


class AwaitingCallable:
    async def __call__(self) -> None:
        await asyncio.sleep(0)


@pytest.mark.parametrize(
    ("fn", "expected"),
    [
        (plain, True),
        (awaits, False),
        (iterates, False),
        (loops, False),
        (enters, False),
        (awaits_only_in_a_nested_function, True),
        (sync, False),
        (wrapping(plain), False),  # judged by the wrapper's code, not the wrapped one's
        (AsyncCallable(), True),
        (AwaitingCallable(), False),
        (lambda: None, False),
    ],
    ids=lambda value: getattr(value, "__name__", type(value).__name__),
)
def test_never_suspends(fn: Any, expected: bool) -> None:
    assert never_suspends(fn) is expected


def test_run_to_end_returns_the_value_and_raises_what_the_coroutine_raises() -> None:
    assert run_to_end(plain(21)) == 42

    async def broken() -> None:
        raise KeyError("x")

    with pytest.raises(KeyError):
        run_to_end(broken())
