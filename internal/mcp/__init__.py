"""codex-mcp's protocol core: JSON-RPC 2.0 and the MCP methods, with no transport code
(layers and how transports use it: specs/design.md, "The core's layers")."""

from .composite import CompositeProvider
from .context import RequestContext
from .deferred import Deferred
from .errors import CodexMcpError, McpError
from .jsonrpc import JsonObject, RequestId
from .log_levels import LOG_LEVELS
from .peer import CallOptions, Inbound, JsonRpcPeer, MethodEntry, Outbound
from .provider import Provider, ResourceNotFound, UnknownPrompt, UnknownTool
from .ready import Ready
from .server import ServerCore
from .session import ClientError, ServerSession
from .versions import LATEST_VERSION, SUPPORTED_VERSIONS

__all__ = [
    "LATEST_VERSION",
    "LOG_LEVELS",
    "SUPPORTED_VERSIONS",
    "CallOptions",
    "ClientError",
    "CodexMcpError",
    "CompositeProvider",
    "Deferred",
    "Inbound",
    "JsonObject",
    "JsonRpcPeer",
    "McpError",
    "MethodEntry",
    "Outbound",
    "Provider",
    "Ready",
    "RequestContext",
    "RequestId",
    "ResourceNotFound",
    "ServerCore",
    "ServerSession",
    "UnknownPrompt",
    "UnknownTool",
]
