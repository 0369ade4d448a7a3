"""codex-mcp's protocol core: JSON-RPC 2.0 and the MCP methods, with no transport code.

Layers, each importing only those above it: `errors` (the error family's root and
`McpError`), `jsonrpc` (envelopes, codes), `peer` (one end of a JSON-RPC connection, for
servers and clients alike), `context` and `session` (MCP on the peer),
`provider`/`composite`/`namespace` (where tools, resources and prompts come from),
`methods` (the MCP methods), `server` (`ServerCore`).

Transports open a session per connection with `ServerCore.open_session(outbound)`,
feed it decoded messages with `session.receive(...)`, and write what it sends
through `outbound.send(message, related)`.
"""

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
