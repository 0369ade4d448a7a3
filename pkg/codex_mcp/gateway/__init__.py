"""The gateway's building blocks that do not depend on the protocol core: configuration,
Codex-safe tool names, schema repairs, error normalization, and `codex-mcp lint`.

    from codex_mcp.gateway import load_config, NameTable, repair_tool, normalize_rpc_error

See specs/gateway.md for the config format and the Codex facts each rule rests on.
"""

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
from .naming import NamedTool, NameTable, assign_names, exposed_name, sanitize_name
from .repair import Change, RepairedTool, apply_tool_settings, normalize_result, repair_tool

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
