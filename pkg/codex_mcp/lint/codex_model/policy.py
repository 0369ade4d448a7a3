"""What Codex 0.169 does when a tool is called: approval, and what the model reads back.

Approval (codex-rs/core/src/mcp_tool_call.rs, `maybe_request_mcp_tool_approval` and
`requires_mcp_tool_approval`): outside full access (approval "never" with the
danger-full-access sandbox), a call needs approval unless the tool says `readOnlyHint: true`,
or says both `destructiveHint: false` and `openWorldHint: false`. With approval "never" (what
`codex exec` runs with, in its read-only sandbox) it is refused: "MCP tool call requires
approval, but approval policy is never"; interactively the user is asked (from the source; not
checked with the CLI, which we only drive non-interactively). Confirmed
with the CLI for no annotations, readOnlyHint false, destructiveHint false alone,
openWorldHint false alone, destructive true + openWorld false (refused) and readOnlyHint true
(with or without destructiveHint true), destructive false + openWorld false (run).

Results (codex-rs/protocol/src/models.rs, `CallToolResult::as_function_call_output_payload`):
when a result has a non-null `structuredContent`, the model gets only its JSON; the text
blocks are not shown. Confirmed with the CLI. A tool that declares an `outputSchema` returns
`structuredContent` (MCP 2025-06-18), so its text is never seen by the model.
"""

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
