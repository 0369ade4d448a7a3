"""What Codex declares to an MCP server in its `initialize` (specs/gateway.md,
"Relaying": Requests to the client)."""

from __future__ import annotations

from codex_mcp.core.jsonrpc import JsonObject
from codex_mcp.core.session import CLIENT_CAPABILITY_FOR

#: What a child may use of its client, which the gateway relays.
RELAYED_CAPABILITIES = tuple(CLIENT_CAPABILITY_FOR.values())


def codex_client_capabilities() -> JsonObject:
    return {"elicitation": {"form": {}, "url": {}}}


def everything_relayed() -> JsonObject:
    """All the gateway can relay, for a child whose client is unknown until it asks
    (`codex-mcp -- <server>`): a request the client cannot answer is refused then."""
    return {
        "sampling": {},
        "elicitation": {"form": {}, "url": {}},
        "roots": {"listChanged": True},
    }
