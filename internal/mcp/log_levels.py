"""MCP's log levels: the syslog severities, least severe first (server/utilities/logging)."""

from __future__ import annotations

from typing import Final

LOG_LEVELS: Final = (
    "debug",
    "info",
    "notice",
    "warning",
    "error",
    "critical",
    "alert",
    "emergency",
)
#: A level's rank: a message passes a threshold when its rank is at least the threshold's.
LOG_LEVEL_RANK: Final = {name: rank for rank, name in enumerate(LOG_LEVELS)}
