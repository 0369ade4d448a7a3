"""A handler's answer that is already there.

A concurrent method's handler returns an awaitable; when it could answer without
waiting at all it returns `Ready(result)` instead, and the session replies on the
spot, with no task, as it does for ping. Awaiting a Ready gives its value, so any
caller that simply awaits a handler or `Provider.call_tool` keeps working.
"""

from __future__ import annotations

from collections.abc import Generator
from typing import Any, Generic, TypeVar

T = TypeVar("T")


class Ready(Generic[T]):
    __slots__ = ("value",)

    def __init__(self, value: T) -> None:
        self.value = value

    def __await__(self) -> Generator[Any, None, T]:
        return self.value
        yield  # a generator that returns at once: `await` never suspends
