"""What Codex 0.171 does when a tool is called: approval, and what the model reads back
(specs/gateway.md, "What Codex 0.171 does to MCP tools": Approval, Results)."""

from __future__ import annotations

from typing import Any

REFUSAL = "MCP tool call requires approval, but approval policy is never"


def runs_without_approval(annotations: Any) -> bool:
    if not isinstance(annotations, dict):
        return False
    if annotations.get("readOnlyHint") is True:
        return True
    return annotations.get("destructiveHint") is False and annotations.get("openWorldHint") is False


def model_sees_only_structured_content(tool: dict[str, Any]) -> bool:
    return isinstance(tool.get("outputSchema"), dict)
