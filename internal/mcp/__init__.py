"""codex-mcp's protocol core: JSON-RPC 2.0 and the MCP methods, with no transport code.

Transports open a session per connection with `ServerCore.open_session(outbound)`,
feed it decoded messages with `session.receive(...)`, and write what it sends
through `outbound.send(message, related_request_id)`.
"""

from .context import LOG_LEVELS, RequestContext
from .jsonrpc import JsonObject, JsonRpcError, RequestId
from .provider import CompositeProvider, Provider, ResourceNotFound, UnknownPrompt, UnknownTool
from .ready import Ready
from .server import ServerCore
from .session import ClientError, Outbound, ServerSession
from .versions import LATEST_VERSION, SUPPORTED_VERSIONS

__all__ = [
    "LATEST_VERSION",
    "LOG_LEVELS",
    "SUPPORTED_VERSIONS",
    "ClientError",
    "CompositeProvider",
    "JsonObject",
    "JsonRpcError",
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
