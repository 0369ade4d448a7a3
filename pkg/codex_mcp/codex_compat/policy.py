"""What Codex does when a tool is called: approval, and what the model reads back
(specs/gateway.md, "What Codex does to MCP tools": Approval, Results).

A tool without readOnlyHint (nor destructiveHint and openWorldHint both false) needs approval
(`requires_mcp_tool_approval`), unless Codex runs in full access: approval policy `never` with
the sandbox `danger-full-access` (`is_full_access_mode`, codex-rs/core/src/mcp_tool_call.rs).
`codex exec` always runs with approval `never` (codex-rs/exec: a harness override), so there
the sandbox decides: full access runs the tool unasked, any other sandbox refuses it. Both
checked with the CLI (tests/gateway/test_codex_interop.py, tests/doctor/
test_doctor_against_codex.py).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

REFUSAL = "MCP tool call requires approval, but approval policy is never"
#: What the user can do about a tool that needs approval (specs/gateway.md).
APPROVAL_ADVICE = (
    "interactive Codex asks you before each call; `codex exec` (approval never) refuses it, "
    "unless run with `--sandbox danger-full-access`, which runs every tool unasked. Mark it "
    "readOnlyHint only if you know it changes nothing"
)
FULL_ACCESS = "danger-full-access"
NEVER = "never"


@dataclass(frozen=True, slots=True)
class Permissions:
    """The sandbox and approval policy Codex runs with: config.toml's `sandbox_mode` and
    `approval_policy` (its `--profile` file over it), else Codex's defaults."""

    sandbox_mode: str = "read-only"
    #: Interactive Codex's; `codex exec` runs with `never` whatever this says.
    approval_policy: str = "on-request"
    #: Where they come from, for messages ("config.toml", "Codex's defaults").
    origin: str = "Codex's defaults"

    @property
    def exec_runs_unasked(self) -> bool:
        return self.sandbox_mode == FULL_ACCESS


#: What Codex runs tools under when its config says nothing.
CODEX_DEFAULTS = Permissions()


def runs_without_approval(annotations: Any) -> bool:
    if not isinstance(annotations, dict):
        return False
    if annotations.get("readOnlyHint") is True:
        return True
    return annotations.get("destructiveHint") is False and annotations.get("openWorldHint") is False


def approval_says(permissions: Permissions) -> tuple[bool, str]:
    """For a tool that needs approval: whether `codex exec` refuses it, and what each Codex
    does with it under `permissions`, in words."""
    p = permissions
    sandbox = f"sandbox {p.sandbox_mode} ({p.origin})"
    if p.approval_policy == NEVER:
        interactive = (
            "interactive Codex runs it without asking too (approval_policy never)"
            if p.exec_runs_unasked
            else "interactive Codex refuses it too (approval_policy never)"
        )
    else:
        interactive = f"interactive Codex asks the user first (approval_policy {p.approval_policy})"
    if p.exec_runs_unasked:
        return (
            False,
            f"no readOnlyHint: under {sandbox} `codex exec` runs it without asking; {interactive}",
        )
    return True, (
        f"no readOnlyHint: `codex exec` (approval never, {sandbox}) refuses to call it "
        f'("{REFUSAL}"); {interactive}'
    )


def model_sees_only_structured_content(tool: dict[str, Any]) -> bool:
    return isinstance(tool.get("outputSchema"), dict)
