"""Building 2026-07-28 requests: the per-request `_meta` envelope every stateless request carries."""

from __future__ import annotations

from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples/everything_server.py"

VERSION = "io.modelcontextprotocol/protocolVersion"
CAPABILITIES = "io.modelcontextprotocol/clientCapabilities"
CLIENT_INFO = "io.modelcontextprotocol/clientInfo"
LOG_LEVEL = "io.modelcontextprotocol/logLevel"
SERVER_INFO = "io.modelcontextprotocol/serverInfo"
SUBSCRIPTION_ID = "io.modelcontextprotocol/subscriptionId"
TASKS = "io.modelcontextprotocol/tasks"

ALL_CAPABILITIES: dict[str, Any] = {
    "elicitation": {},
    "sampling": {},
    "roots": {},
    "extensions": {TASKS: {}},
}


def envelope(capabilities: dict[str, Any] | None = None, **extra: Any) -> dict[str, Any]:
    meta: dict[str, Any] = {
        VERSION: "2026-07-28",
        CAPABILITIES: ALL_CAPABILITIES if capabilities is None else capabilities,
        CLIENT_INFO: {"name": "stateless-tests", "version": "1.0"},
    }
    meta.update(extra)
    return meta


def params(capabilities: dict[str, Any] | None = None, meta: Any = None, **fields: Any) -> Any:
    """Request params with the envelope (plus `meta` keys, e.g. a progressToken)."""
    return {**fields, "_meta": {**envelope(capabilities), **(meta or {})}}


def text_of(result: dict[str, Any]) -> str:
    return "\n".join(block.get("text", "") for block in result.get("content", []))


def accept(**content: Any) -> dict[str, Any]:
    return {"action": "accept", "content": content}
