"""CODEX_HOME: where Codex keeps its configuration, credentials and sessions, and where
the Rust codex-mcp-server kept its log (`$CODEX_HOME/log/codex-rmcp.log`)."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Final

CODEX_HOME_ENV: Final = "CODEX_HOME"
LOG_FILE: Final = Path("log/codex-rmcp.log")


def codex_home(env: Mapping[str, str] | None = None) -> Path:
    """$CODEX_HOME, else ~/.codex (Codex's own default)."""
    env = os.environ if env is None else env
    configured = env.get(CODEX_HOME_ENV)
    return Path(configured).expanduser() if configured else Path.home() / ".codex"


def default_log_file(env: Mapping[str, str] | None = None) -> Path:
    return codex_home(env) / LOG_FILE
