"""The gateway: `codex-mcp` with a `.mcp.json`, one MCP server in front of the child servers
the file names, served through the protocol core (`codex_mcp.core`) like any server of ours.

Its parts import one way: `children/` supervises each child process (its states, its
connection, its kept listing); `routing/` and `relay/` build on it, the first to name and
route what the children offer (catalog, tool names, per-session children), the second to
send a front request to its child and put the child's questions to the client; the modules
at the top (`provider.py`, `status.py`, `serve.py`) put them together. Beside them, and
below them all: its configuration (`config*.py`, `env.py`, `reload.py`, `early.py`) and its
errors (`errors.py`). The model of what Codex does to tools, and the repairs made from it,
are `codex_mcp.lint`'s, which the gateway imports.

    from codex_mcp.gateway import load_config, normalize_rpc_error

See specs/gateway.md for the config format and what the gateway does to each message.
"""

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .config import (
        CONFIG_ENV,
        SERVER_NAME_ENV,
        display_path,
        find_config,
        load_config,
        passthrough_config,
        read_config,
        select_server,
    )
    from .config_model import (
        GatewayConfig,
        HttpTarget,
        RepairConfig,
        RestartConfig,
        ServerConfig,
        StdioTarget,
        ToolSettings,
    )
    from .config_values import ConfigError
    from .errors import (
        crashed_error,
        exited_error,
        normalize_exception,
        normalize_rpc_error,
        passthrough_enabled,
        spawn_error,
        timeout_error,
    )

# Loaded on first use: `codex-mcp` imports `gateway.config` at every start to look for a
# .mcp.json, and must not pay for the config model when there is none.
_WHERE = {
    "CONFIG_ENV": ".config",
    "SERVER_NAME_ENV": ".config",
    "display_path": ".config",
    "find_config": ".config",
    "load_config": ".config",
    "passthrough_config": ".config",
    "read_config": ".config",
    "select_server": ".config",
    "GatewayConfig": ".config_model",
    "HttpTarget": ".config_model",
    "RepairConfig": ".config_model",
    "RestartConfig": ".config_model",
    "ServerConfig": ".config_model",
    "StdioTarget": ".config_model",
    "ToolSettings": ".config_model",
    "ConfigError": ".config_values",
    "crashed_error": ".errors",
    "exited_error": ".errors",
    "normalize_exception": ".errors",
    "normalize_rpc_error": ".errors",
    "passthrough_enabled": ".errors",
    "spawn_error": ".errors",
    "timeout_error": ".errors",
}


def __getattr__(name: str) -> Any:
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(import_module(module, __name__), name)


__all__ = [
    "CONFIG_ENV",
    "SERVER_NAME_ENV",
    "ConfigError",
    "GatewayConfig",
    "HttpTarget",
    "RepairConfig",
    "RestartConfig",
    "ServerConfig",
    "StdioTarget",
    "ToolSettings",
    "crashed_error",
    "display_path",
    "exited_error",
    "find_config",
    "load_config",
    "normalize_exception",
    "normalize_rpc_error",
    "passthrough_config",
    "passthrough_enabled",
    "read_config",
    "select_server",
    "spawn_error",
    "timeout_error",
]
