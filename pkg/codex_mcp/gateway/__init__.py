"""The gateway's building blocks that do not depend on the protocol core: configuration,
Codex-safe tool names, schema repairs, error normalization, and `codex-mcp lint`.

    from codex_mcp.gateway import load_config, NameTable, repair_tool, normalize_rpc_error

See specs/gateway.md for the config format and the Codex facts each rule rests on.
"""

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .config.load import (
        CONFIG_ENV,
        SERVER_NAME_ENV,
        ConfigError,
        display_path,
        find_config,
        load_config,
        passthrough_config,
        read_config,
        select_server,
    )
    from .config.model import (
        GatewayConfig,
        HttpTarget,
        RepairConfig,
        RestartConfig,
        ServerConfig,
        StdioTarget,
        ToolSettings,
    )
    from .errors import (
        crashed_error,
        exited_error,
        normalize_exception,
        normalize_rpc_error,
        passthrough_enabled,
        spawn_error,
        timeout_error,
    )
    from .naming import NamedTool, NameTable, assign_names, exposed_name, sanitize_name
    from .repair import Change, RepairedTool, apply_tool_settings, normalize_result, repair_tool

# Loaded on first use: `codex-mcp` imports `gateway.config` at every start to look for a
# .mcp.json, and must not pay for the config model, repairs and naming when there is none.
_WHERE = {
    "CONFIG_ENV": ".config.load",
    "SERVER_NAME_ENV": ".config.load",
    "display_path": ".config.load",
    "find_config": ".config.load",
    "load_config": ".config.load",
    "passthrough_config": ".config.load",
    "read_config": ".config.load",
    "select_server": ".config.load",
    "GatewayConfig": ".config.model",
    "HttpTarget": ".config.model",
    "RepairConfig": ".config.model",
    "RestartConfig": ".config.model",
    "ServerConfig": ".config.model",
    "StdioTarget": ".config.model",
    "ToolSettings": ".config.model",
    "ConfigError": ".config.load",
    "crashed_error": ".errors",
    "exited_error": ".errors",
    "normalize_exception": ".errors",
    "normalize_rpc_error": ".errors",
    "passthrough_enabled": ".errors",
    "spawn_error": ".errors",
    "timeout_error": ".errors",
    "NamedTool": ".naming",
    "NameTable": ".naming",
    "assign_names": ".naming",
    "exposed_name": ".naming",
    "sanitize_name": ".naming",
    "Change": ".repair",
    "RepairedTool": ".repair",
    "apply_tool_settings": ".repair",
    "normalize_result": ".repair",
    "repair_tool": ".repair",
}


def __getattr__(name: str) -> Any:
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(import_module(module, __name__), name)


__all__ = [
    "CONFIG_ENV",
    "SERVER_NAME_ENV",
    "Change",
    "ConfigError",
    "GatewayConfig",
    "HttpTarget",
    "NameTable",
    "NamedTool",
    "RepairConfig",
    "RepairedTool",
    "RestartConfig",
    "ServerConfig",
    "StdioTarget",
    "ToolSettings",
    "apply_tool_settings",
    "assign_names",
    "crashed_error",
    "display_path",
    "exited_error",
    "exposed_name",
    "find_config",
    "load_config",
    "normalize_exception",
    "normalize_result",
    "normalize_rpc_error",
    "passthrough_config",
    "passthrough_enabled",
    "read_config",
    "repair_tool",
    "sanitize_name",
    "select_server",
    "spawn_error",
    "timeout_error",
]
