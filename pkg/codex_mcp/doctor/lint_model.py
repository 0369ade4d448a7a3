"""The lint model doctor reuses: what Codex does to each tool (gateway/lint.py, gateway/codex/)
and the gateway pieces doctor reads a gateway entry with. The one module of doctor that
imports them, so a move of those modules changes these lines only.
"""

from __future__ import annotations

from codex_mcp.gateway.codex.client import codex_client_capabilities
from codex_mcp.gateway.config.load import CONFIG_ENV, ConfigError, find_config, read_config
from codex_mcp.gateway.config.model import GatewayConfig, StdioTarget
from codex_mcp.gateway.errors import normalize_exception, one_line
from codex_mcp.gateway.lint import (
    SRC_STARTUP,
    Finding,
    LintReport,
    Listing,
    ServerReport,
    ToolReport,
    lint_servers,
)
from codex_mcp.gateway.lint_fix import APPROVAL_ADVICE

__all__ = [
    "APPROVAL_ADVICE",
    "CONFIG_ENV",
    "SRC_STARTUP",
    "ConfigError",
    "Finding",
    "GatewayConfig",
    "LintReport",
    "Listing",
    "ServerReport",
    "StdioTarget",
    "ToolReport",
    "codex_client_capabilities",
    "find_config",
    "lint_servers",
    "normalize_exception",
    "one_line",
    "read_config",
]
