"""codex-mcp's MCP client: talk to any MCP server over stdio, Streamable HTTP, legacy
HTTP+SSE, or in memory.

    from codex_mcp.client import Client

    async with Client.stdio(["python", "-m", "my_server"], server_name="mine") as client:
        for tool in await client.list_tools(qualify=True):
            print(tool.qualified_name)
        result = await client.call_tool("echo", {"message": "hi"}, timeout=5)
        print(result.text)
"""

from .approval import Approval
from .client import Client
from .errors import (
    ApprovalDenied,
    ConnectionClosed,
    McpClientError,
    McpError,
    RequestTimeout,
    SessionExpired,
    TransportError,
    is_retryable,
)
from .naming import qualify_tool_name
from .retry import Backoff, exponential_backoff
from .session import ClientSession
from .telemetry import Telemetry, TelemetryEvent, subscribe
from .transports import (
    LegacySseTransport,
    MemoryTransport,
    StdioTransport,
    StreamableHttpTransport,
    Transport,
)
from .transports.stdio import SpawnError
from .types import (
    CallToolResult,
    Completion,
    GetPromptResult,
    InitializeResult,
    Page,
    ReadResourceResult,
    Tool,
)

__all__ = [
    "Approval",
    "ApprovalDenied",
    "Backoff",
    "CallToolResult",
    "Client",
    "ClientSession",
    "Completion",
    "ConnectionClosed",
    "GetPromptResult",
    "InitializeResult",
    "LegacySseTransport",
    "McpClientError",
    "McpError",
    "MemoryTransport",
    "Page",
    "ReadResourceResult",
    "RequestTimeout",
    "SessionExpired",
    "SpawnError",
    "StdioTransport",
    "StreamableHttpTransport",
    "Telemetry",
    "TelemetryEvent",
    "Tool",
    "Transport",
    "TransportError",
    "exponential_backoff",
    "is_retryable",
    "qualify_tool_name",
    "subscribe",
]
