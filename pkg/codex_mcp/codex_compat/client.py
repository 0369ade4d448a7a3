"""What Codex declares to an MCP server, and which revision it speaks to it (specs/gateway.md,
"Relaying": Requests to the client; specs/doctor.md, "What Codex says"). Read off the wire
between the CLI and a server (tests/doctor/test_doctor_against_codex.py)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from codex_mcp.core.jsonrpc import JsonObject
from codex_mcp.core.session import CLIENT_CAPABILITY_FOR

from . import CODEX_CLI_VERSION

#: What a child may use of its client, which the gateway relays.
RELAYED_CAPABILITIES = tuple(CLIENT_CAPABILITY_FOR.values())
#: The revision of Codex's `initialize`.
CODEX_PROTOCOL_VERSION = "2025-06-18"
CODEX_CLIENT_INFO: JsonObject = {
    "name": "codex-mcp-client",
    "title": "Codex",
    "version": f"{CODEX_CLI_VERSION}.0",
}
#: The config.toml feature, and over stdio the entry's `env` marker too (which Codex takes
#: out of the server's environment), that make Codex send `server/discover` first.
FEATURE_2026 = "mcp_2026_07_28"
MARKER_2026 = "CODEX_MCP_PROTOCOL_VERSION"
REVISION_2026 = "2026-07-28"


def codex_client_capabilities() -> JsonObject:
    """What Codex declares that a server can use of its client (and the gateway relays)."""
    return {"elicitation": {"form": {}, "url": {}}}


def codex_declared_capabilities() -> JsonObject:
    """All Codex declares, its own experimental capability (a login changed) included."""
    return {"experimental": {"codex/auth-change": {}}, **codex_client_capabilities()}


def codex_client_options() -> dict[str, Any]:
    """The keywords of `codex_mcp.client.Client` that greet a server as Codex does."""
    return {
        "client_name": CODEX_CLIENT_INFO["name"],
        "client_title": CODEX_CLIENT_INFO["title"],
        "client_version": CODEX_CLIENT_INFO["version"],
        "protocol_version": CODEX_PROTOCOL_VERSION,
        "capabilities": codex_declared_capabilities(),
    }


def discovers_first(feature_on: bool, stdio_env: Mapping[str, str] | None) -> bool:
    """Whether Codex sends `server/discover` (2026-07-28) before falling back to `initialize`:
    with the feature, over HTTP always, over stdio only when the entry's `env` has the marker
    (`stdio_env`: that env; None for an HTTP entry)."""
    if not feature_on:
        return False
    return stdio_env is None or stdio_env.get(MARKER_2026) == REVISION_2026


def everything_relayed() -> JsonObject:
    """All the gateway can relay, for a child whose client is unknown until it asks
    (`codex-mcp -- <server>`): a request the client cannot answer is refused then."""
    return {
        "sampling": {},
        "elicitation": {"form": {}, "url": {}},
        "roots": {"listChanged": True},
    }
