"""Building method-table entries (the table type lives with the peer that uses it)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from ..peer import MethodEntry, MethodTable

if TYPE_CHECKING:
    from ..context import RequestContext
    from ..jsonrpc import JsonObject
    from ..session import ServerSession

AsyncHandler = Callable[["ServerSession", "JsonObject", "RequestContext"], Awaitable[Any]]
InlineHandler = Callable[["ServerSession", "JsonObject", None], Any]


def inline(fn: InlineHandler) -> MethodEntry:
    """A plain function answered on the spot: it never waits, so it needs no task and is
    never held up by a slow call."""
    return MethodEntry(fn, inline=True)


def concurrent(fn: AsyncHandler) -> MethodEntry:
    """A handler returning an awaitable (or Ready): it runs as a task of its own."""
    return MethodEntry(fn, inline=False)


__all__ = ["AsyncHandler", "InlineHandler", "MethodEntry", "MethodTable", "concurrent", "inline"]
