"""Asking the MCP client to approve a command or a patch, and reading its answer
(specs/codex-tools.md, "What we serve": approvals)."""

from __future__ import annotations

import shlex
from typing import Any, Final

from codex_mcp.core.jsonrpc import JsonObject, RequestId

from .protocol import ApprovalDetails, ApprovalKind

EXEC_APPROVAL: Final = "exec-approval"
PATCH_APPROVAL: Final = "patch-approval"
#: How much of a patch the message shows; the whole patch is in `codex_changes`.
MESSAGE_PATCH_LIMIT: Final = 4000
_APPROVED_DECISIONS: Final = frozenset({"approved", "approved_for_session"})
_APPROVED_DECISION_OBJECTS: Final = frozenset({"approved_execpolicy_amendment"})


def command_argv(details: ApprovalDetails) -> list[str]:
    if details.argv is not None:
        return details.argv
    if not details.command:
        return []
    try:
        return shlex.split(details.command)
    except ValueError:  # unbalanced quotes: show it whole rather than fail
        return [details.command]


def approval_message(kind: ApprovalKind, details: ApprovalDetails) -> str:
    lines = [details.reason] if details.reason else []
    if kind == "command":
        lines.append(f"Allow Codex to run `{details.command or ''}` in `{details.cwd or ''}`?")
        return "\n".join(lines)
    lines.append("Allow Codex to apply proposed code changes?")
    patch = "\n".join(_describe_change(change) for change in details.changes or [])
    if len(patch) > MESSAGE_PATCH_LIMIT:
        patch = patch[:MESSAGE_PATCH_LIMIT] + "\n[... truncated]"
    if patch:
        lines.append(patch)
    return "\n".join(lines)


def approval_request(
    kind: ApprovalKind, details: ApprovalDetails, request_id: RequestId | None
) -> JsonObject:
    """`elicitation/create` params for one approval."""
    params: JsonObject = {
        "message": approval_message(kind, details),
        "requestedSchema": {"type": "object", "properties": {}},
        "threadId": details.thread_id,
        "codex_elicitation": EXEC_APPROVAL if kind == "command" else PATCH_APPROVAL,
        "codex_mcp_tool_call_id": "" if request_id is None else str(request_id),
        "codex_event_id": details.turn_id or "",
        "codex_call_id": details.call_id or "",
    }
    if kind == "command":
        params["codex_command"] = command_argv(details)
        params["codex_cwd"] = details.cwd or ""
        params["codex_parsed_cmd"] = _parsed_command(details.raw.get("commandActions"))
    else:
        params["codex_changes"] = _legacy_changes(details.changes or [])
        if details.grant_root:
            params["codex_grant_root"] = details.grant_root
    if details.reason:
        params["codex_reason"] = details.reason
    return params


def approved(reply: Any) -> bool:
    """True only for an explicit yes: `{"action": "accept"}` or an approving old
    `{"decision": ...}`. An `action` other than accept wins over any decision."""
    if not isinstance(reply, dict):
        return False
    if "action" in reply:
        return bool(reply["action"] == "accept")
    decision = reply.get("decision")
    if isinstance(decision, str):
        return decision in _APPROVED_DECISIONS
    if isinstance(decision, dict) and len(decision) == 1:
        return next(iter(decision)) in _APPROVED_DECISION_OBJECTS
    return False


def _describe_change(change: JsonObject) -> str:
    kind = change.get("kind")
    kind_type = kind.get("type") if isinstance(kind, dict) else kind
    letter = {"add": "A", "delete": "D", "update": "M"}.get(str(kind_type), "?")
    diff = change.get("diff") or ""
    return f"{letter} {change.get('path', '')}\n{diff}".rstrip()


def _legacy_changes(changes: list[JsonObject]) -> JsonObject:
    """app-server's [{"path", "kind", "diff"}] as the old {path: FileChange} map."""
    out: JsonObject = {}
    for change in changes:
        kind = change.get("kind")
        kind = kind if isinstance(kind, dict) else {}
        diff = change.get("diff") or ""
        if kind.get("type") == "update":
            out[str(change.get("path"))] = {
                "type": "update",
                "unified_diff": diff,
                "move_path": kind.get("move_path"),
            }
        else:
            out[str(change.get("path"))] = {"type": kind.get("type"), "content": diff}
    return out


def _parsed_command(actions: Any) -> list[JsonObject]:
    """app-server's commandActions in the old parsed_cmd shape (`cmd`, not `command`)."""
    if not isinstance(actions, list):
        return []
    parsed = []
    for action in actions:
        if isinstance(action, dict):
            entry = {key: value for key, value in action.items() if key != "command"}
            if "command" in action:
                entry["cmd"] = action["command"]
            parsed.append(entry)
    return parsed
