"""What Codex does when a tool is called: approval, and what the model reads back
(specs/gateway.md, "What Codex does to MCP tools": Approval, Results)."""

from __future__ import annotations

from typing import Any

REFUSAL = "MCP tool call requires approval, but approval policy is never"
#: What the user can do about a tool that needs approval (specs/gateway.md).
APPROVAL_ADVICE = (
    "interactive Codex asks you before each call; `codex exec` (approval never) refuses it, "
    "unless run with `--sandbox danger-full-access`, which runs every tool unasked. Mark it "
    "readOnlyHint only if you know it changes nothing"
)


def runs_without_approval(annotations: Any) -> bool:
    if not isinstance(annotations, dict):
        return False
    if annotations.get("readOnlyHint") is True:
        return True
    return annotations.get("destructiveHint") is False and annotations.get("openWorldHint") is False


def model_sees_only_structured_content(tool: dict[str, Any]) -> bool:
    return isinstance(tool.get("outputSchema"), dict)
