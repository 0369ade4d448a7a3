"""The MCP client: any MCP server over stdio, Streamable HTTP, HTTP+SSE or in memory
(README, "Talk to any MCP server from Python"; specs/client.md)."""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

# Names load on first use (PEP 562): a program that needs only the stdio transport (the
# gateway with stdio children) never pays for aiohttp (~150 ms).
_LAZY = {
    "Approval": ".approval",
    "Client": ".client",
    "ApprovalDenied": ".errors",
    "ConnectionClosed": ".errors",
    "McpClientError": ".errors",
    "McpError": "codex_mcp.core.errors",
    "RequestTimeout": ".errors",
    "SessionExpired": ".errors",
    "TransportError": ".errors",
    "is_retryable": ".errors",
    "qualify_tool_name": "codex_mcp.codex_compat.names",
    "Backoff": ".client",
    "exponential_backoff": ".client",
    "ClientSession": ".session",
    "Telemetry": ".telemetry",
    "TelemetryEvent": ".telemetry",
    "subscribe": ".telemetry",
    "LegacySseTransport": ".transports.legacy_sse",
    "MemoryTransport": ".transports.memory",
    "StdioTransport": ".transports.stdio",
    "StreamableHttpTransport": ".transports.streamable_http",
    "Transport": ".transports.base",
    "SpawnError": ".errors",
    "CallToolResult": ".types",
    "Completion": ".types",
    "GetPromptResult": ".types",
    "InitializeResult": ".types",
    "Page": ".types",
    "Prompt": ".types",
    "PromptArgument": ".types",
    "ReadResourceResult": ".types",
    "Resource": ".types",
    "ResourceTemplate": ".types",
    "Tool": ".types",
    "ServerCard": "codex_mcp.core.server_card",
    "ServerCardError": ".server_card",
    "fetch_server_card": ".server_card",
    "server_card_url": ".server_card",
    "LoadedSkill": ".skills",
    "Skill": ".skills",
    "SkillFile": ".skills",
    "SkillVerificationError": ".skills",
}

if TYPE_CHECKING:
    from codex_mcp.codex_compat.names import qualify_tool_name
    from codex_mcp.core.errors import McpError
    from codex_mcp.core.server_card import ServerCard

    from .approval import Approval
    from .client import Backoff, Client, exponential_backoff
    from .errors import (
        ApprovalDenied,
        ConnectionClosed,
        McpClientError,
        RequestTimeout,
        SessionExpired,
        SpawnError,
        TransportError,
        is_retryable,
    )
    from .server_card import ServerCardError, fetch_server_card, server_card_url
    from .session import ClientSession
    from .skills import LoadedSkill, Skill, SkillFile, SkillVerificationError
    from .telemetry import Telemetry, TelemetryEvent, subscribe
    from .transports.base import Transport
    from .transports.legacy_sse import LegacySseTransport
    from .transports.memory import MemoryTransport
    from .transports.stdio import StdioTransport
    from .transports.streamable_http import StreamableHttpTransport
    from .types import (
        CallToolResult,
        Completion,
        GetPromptResult,
        InitializeResult,
        Page,
        Prompt,
        PromptArgument,
        ReadResourceResult,
        Resource,
        ResourceTemplate,
        Tool,
    )


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(module, __name__), name)
    globals()[name] = value
    return value


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
    "LoadedSkill",
    "McpClientError",
    "McpError",
    "MemoryTransport",
    "Page",
    "Prompt",
    "PromptArgument",
    "ReadResourceResult",
    "RequestTimeout",
    "Resource",
    "ResourceTemplate",
    "ServerCard",
    "ServerCardError",
    "SessionExpired",
    "Skill",
    "SkillFile",
    "SkillVerificationError",
    "SpawnError",
    "StdioTransport",
    "StreamableHttpTransport",
    "Telemetry",
    "TelemetryEvent",
    "Tool",
    "Transport",
    "TransportError",
    "exponential_backoff",
    "fetch_server_card",
    "is_retryable",
    "qualify_tool_name",
    "server_card_url",
    "subscribe",
]
