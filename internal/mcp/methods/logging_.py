from __future__ import annotations

from collections.abc import Awaitable
from typing import TYPE_CHECKING

from ..jsonrpc import JsonObject, invalid_params
from ..log_levels import LOG_LEVEL_RANK, LOG_LEVELS
from .table import MethodTable, concurrent

if TYPE_CHECKING:
    from ..context import RequestContext
    from ..session import ServerSession


def set_level(
    session: ServerSession, params: JsonObject, ctx: RequestContext
) -> Awaitable[JsonObject]:
    level = params.get("level")
    rank = LOG_LEVEL_RANK.get(level) if isinstance(level, str) else None
    if rank is None or not isinstance(level, str):
        raise invalid_params(f"'level' must be one of {', '.join(LOG_LEVELS)}")
    session.log_threshold = rank
    session.state_changed()
    return _tell_provider(session, level, ctx)


async def _tell_provider(session: ServerSession, level: str, ctx: RequestContext) -> JsonObject:
    await session.core.provider.set_log_level(level, ctx)  # a relay passes it on
    return {}


METHODS: MethodTable = {"logging/setLevel": concurrent(set_level)}
