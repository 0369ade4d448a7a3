from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ..context import RequestContext
    from ..jsonrpc import JsonObject
    from ..session import ServerSession

AsyncHandler = Callable[["ServerSession", "JsonObject", "RequestContext"], Awaitable[Any]]
InlineHandler = Callable[["ServerSession", "JsonObject", None], Any]


@dataclass(frozen=True, slots=True)
class MethodEntry:
    """A method's handler. Inline handlers are plain functions answered on the spot:
    they never wait, so they need no task and can never be held up by a slow call."""

    handler: Any
    inline: bool = False


MethodTable = dict[str, MethodEntry]


def inline(fn: InlineHandler) -> MethodEntry:
    return MethodEntry(fn, inline=True)


def concurrent(fn: AsyncHandler) -> MethodEntry:
    return MethodEntry(fn, inline=False)
