"""Default settings as plain values.

The settings model (settings.py) takes its defaults from here, and the stdio
entrypoint uses these directly when nothing is configured (no flags, no
CODEX_MCP_* variables, no .env), so it can answer `initialize` without importing
pydantic-settings. tests/server/test_settings_defaults.py keeps the two equal.
"""

from __future__ import annotations

import dataclasses
import os
from dataclasses import dataclass, fields
from typing import Final, Literal, get_args

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
    request_state_keys: str | None = None
    request_state_key_file: str | None = None
    request_state_ttl: float = 600.0


DEFAULTS: Final = CommonDefaults()


def configured_by_environment() -> bool:
    """Is any of these settings set as a CODEX_MCP_* variable (case-insensitive, as
    pydantic-settings reads them) or through a .env file? Other CODEX_MCP_* variables
    (CODEX_MCP_BENCH_TOOLS, say) are not settings and don't count."""
    names = {ENV_PREFIX + field.name.upper() for field in fields(CommonDefaults)}
    return any(key.upper() in names for key in os.environ) or os.path.exists(ENV_FILE)


#: The flags a Codex config usually passes; read here without pydantic-settings.
_QUICK_FLAGS: Final = {"--serve": "serve", "--log-level": "log_level"}


def quick_flags(argv: list[str]) -> CommonDefaults | None:
    """Settings from `--serve X` and `--log-level L` alone (either `--flag value` or
    `--flag=value`), or None for anything else (other flags, --help, a bad or missing
    value): the settings model then parses those, and explains what is wrong."""
    values: dict[str, str] = {}
    rest = list(argv)
    while rest:
        flag, has_value, value = rest.pop(0).partition("=")
        field = _QUICK_FLAGS.get(flag)
        if field is None:
            return None
        if not has_value:
            if not rest or rest[0].startswith("-"):
                return None
            value = rest.pop(0)
        values[field] = value
    if values.get("log_level", DEFAULTS.log_level) not in get_args(LogLevel):
        return None
    return dataclasses.replace(DEFAULTS, **values)  # type: ignore[arg-type]
