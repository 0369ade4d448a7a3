"""Default settings as plain values.

The settings model (settings.py) takes its defaults from here, and the stdio
entrypoint uses these directly when nothing is configured (no flags, no
CODEX_MCP_* variables, no .env), so it can answer `initialize` without importing
pydantic-settings. tests/server/test_settings_defaults.py keeps the two equal.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, fields
from typing import Final, Literal

LogLevel = Literal["debug", "info", "warning", "error", "critical"]

ENV_PREFIX: Final = "CODEX_MCP_"
ENV_FILE: Final = ".env"


@dataclass(frozen=True, slots=True)
class CommonDefaults:
    serve: str = "builtin"
    log_level: LogLevel = "info"
    max_message_bytes: int = 128 * 1024 * 1024
    shutdown_timeout: float = 5.0
    uvloop: bool = True


DEFAULTS: Final = CommonDefaults()


def configured_by_environment() -> bool:
    """Is any of these settings set as a CODEX_MCP_* variable (case-insensitive, as
    pydantic-settings reads them) or through a .env file? Other CODEX_MCP_* variables
    (CODEX_MCP_BENCH_TOOLS, say) are not settings and don't count."""
    names = {ENV_PREFIX + field.name.upper() for field in fields(CommonDefaults)}
    return any(key.upper() in names for key in os.environ) or os.path.exists(ENV_FILE)
