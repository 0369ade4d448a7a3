"""Default settings as plain values.

The settings model (settings.py) takes its defaults from here, and the stdio
entrypoint uses these directly when nothing is configured (no flags, no
CODEX_MCP_* variables, no .env), so it can answer `initialize` without importing
pydantic-settings. tests/server/test_settings_defaults.py keeps the two equal.
"""

from __future__ import annotations

from dataclasses import dataclass
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
