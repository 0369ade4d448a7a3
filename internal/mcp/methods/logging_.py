from __future__ import annotations

from typing import TYPE_CHECKING

from ..context import LOG_LEVEL_RANK, LOG_LEVELS
from ..jsonrpc import JsonObject, invalid_params
from .table import MethodTable, inline

if TYPE_CHECKING:
    from ..session import ServerSession


def set_level(session: ServerSession, params: JsonObject, _: None) -> JsonObject:
    level = params.get("level")
    rank = LOG_LEVEL_RANK.get(level) if isinstance(level, str) else None
    if rank is None:
        raise invalid_params(f"'level' must be one of {', '.join(LOG_LEVELS)}")
    session.log_threshold = rank
    return {}


METHODS: MethodTable = {"logging/setLevel": inline(set_level)}
