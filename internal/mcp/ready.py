"""A handler's answer that is already there: the session replies on the spot, with no task
(decision 4). Awaiting it gives its value."""

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
