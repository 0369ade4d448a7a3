"""The gateway's environment variables, named as the TypeScript wrapper named them
(WRAPPER_*, DEBUG: the table in specs/gateway.md, "The command line")."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from codex_mcp.settings import DEFAULTS

from ..children.listing_cache import cache_directory
from ..errors import passthrough_enabled

INIT_TIMEOUT_ENV = "WRAPPER_INIT_TIMEOUT_MS"
TOOLS_LIST_TIMEOUT_ENV = "WRAPPER_TOOLS_LIST_TIMEOUT_MS"
STARTUP_BUDGET_ENV = "WRAPPER_STARTUP_BUDGET_MS"
DEFAULT_TIMEOUT_MS = 4000
#: Codex gives a server 30 s (`startup_timeout_sec`) for initialize and tools/list;
#: this leaves room for its spawn and our own start on a loaded machine.
DEFAULT_STARTUP_BUDGET_MS = 20000
#: Spawn plus handshake of one child, unless its `startup_timeout_sec` says otherwise.
DEFAULT_STARTUP_TIMEOUT = 30.0

_TRUE = ("1", "true", "yes", "on")
_FALSE = ("0", "false", "no", "off")


@dataclass(frozen=True, slots=True)
class GatewayEnv:
    init_timeout: float = DEFAULT_TIMEOUT_MS / 1000
    tools_list_timeout: float = DEFAULT_TIMEOUT_MS / 1000
    startup_budget: float = DEFAULT_STARTUP_BUDGET_MS / 1000
    #: Where each child's last good listing is kept (listing_cache.py).
    cache_dir: Path = field(default_factory=cache_directory)
    summary: bool = True
    debug: bool = False
    error_passthrough: bool = False
    #: The largest message a stdio child may send (the stdio server's own
    #: `--max-message-bytes`); a larger one fails the request it answered.
    max_message_bytes: int = DEFAULTS.max_message_bytes
    #: Values that could not be read (the default was used), for the log.
    warnings: tuple[str, ...] = ()

    @classmethod
    def read(cls, environ: Mapping[str, str] | None = None) -> GatewayEnv:
        env = os.environ if environ is None else environ
        no_summary = env.get("WRAPPER_NO_SUMMARY", "").strip().lower() in _TRUE
        summary = env.get("WRAPPER_SUMMARY", "").strip().lower() not in _FALSE and not no_summary
        warnings: list[str] = []
        return cls(
            init_timeout=_milliseconds(env, INIT_TIMEOUT_ENV, warnings),
            tools_list_timeout=_milliseconds(env, TOOLS_LIST_TIMEOUT_ENV, warnings),
            startup_budget=_milliseconds(
                env, STARTUP_BUDGET_ENV, warnings, DEFAULT_STARTUP_BUDGET_MS
            ),
            cache_dir=cache_directory(env),
            summary=summary,
            debug=env.get("DEBUG", "").strip().lower() in _TRUE,
            error_passthrough=passthrough_enabled(env),
            warnings=tuple(warnings),
        )


def _milliseconds(
    env: Mapping[str, str], name: str, warnings: list[str], default: int = DEFAULT_TIMEOUT_MS
) -> float:
    """Seconds from a `*_MS` variable; unset or empty gives the default."""
    text = env.get(name, "").strip()
    if not text:
        return default / 1000
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not value >= 0:  # also catches nan
        warnings.append(f"{name}={text!r} is not a number of milliseconds; using {default}")
        value = default
    return value / 1000
