"""`codex/event` notifications: every app-server event of a call, in the removed server's
envelope (specs/codex-tools.md, "What we serve": events)."""

from __future__ import annotations

import shlex
from collections.abc import Callable
from typing import Any, Final

from codex_mcp.core.jsonrpc import JsonObject, RequestId

from . import protocol
from .run import CodexEvent

METHOD: Final = "codex/event"
Mapper = Callable[[JsonObject], JsonObject | None]


def event_params(event: CodexEvent, request_id: RequestId | None) -> JsonObject:
    params = event.params
    turn_id = params.get("turnId") or protocol.turn_of(params).get("id") or ""
    return {
        "_meta": {"requestId": request_id, "threadId": event.thread_id},
        "id": turn_id,
        "msg": legacy_msg(event.method, params),
    }


def legacy_msg(method: str, params: JsonObject) -> JsonObject:
    mapper = _MAPPERS.get(method)
    msg = mapper(params) if mapper is not None else None
    return msg if msg is not None else {**params, "type": method}


def progress_message(event: CodexEvent) -> str:
    """A short line for notifications/progress."""
    item = event.params.get("item")
    if isinstance(item, dict) and isinstance(item.get("type"), str):
        return f"{event.method}: {item['type']}"
    return event.method


def _argv(command: Any) -> list[str]:
    if isinstance(command, list):
        return [str(part) for part in command]
    if not isinstance(command, str):
        return []
    try:
        return shlex.split(command)
    except ValueError:
        return [command]


def _session_configured(params: JsonObject) -> JsonObject:
    thread = params.get("thread") or {}
    return {
        "type": "session_configured",
        "session_id": thread.get("id"),
        "thread_id": thread.get("id"),
        "model": thread.get("model"),
        "model_provider_id": thread.get("modelProvider"),
        "cwd": thread.get("cwd"),
        "rollout_path": thread.get("path"),
    }


def _turn_started(params: JsonObject) -> JsonObject:
    turn = protocol.turn_of(params)
    return {"type": "task_started", "turn_id": turn.get("id"), "started_at": turn.get("startedAt")}


def _turn_completed(params: JsonObject) -> JsonObject:
    turn = protocol.turn_of(params)
    status = turn.get("status")
    if status == "interrupted":
        return {"type": "turn_aborted", "turn_id": turn.get("id"), "reason": "interrupted"}
    if status == "failed":
        return {"type": "error", "message": protocol.turn_error_message(turn)}
    return {
        "type": "task_complete",
        "turn_id": turn.get("id"),
        "last_agent_message": protocol.final_message(turn),
        "duration_ms": turn.get("durationMs"),
    }


def _item(params: JsonObject, started: bool) -> JsonObject | None:
    item = params.get("item")
    if not isinstance(item, dict):
        return None
    kind = item.get("type")
    if kind == "agentMessage" and not started:
        return {"type": "agent_message", "message": item.get("text"), "phase": item.get("phase")}
    if kind == "commandExecution":
        msg: JsonObject = {
            "type": "exec_command_begin" if started else "exec_command_end",
            "call_id": item.get("id"),
            "turn_id": params.get("turnId"),
            "command": _argv(item.get("command")),
            "cwd": item.get("cwd"),
        }
        if not started:
            msg.update(
                exit_code=item.get("exitCode"),
                aggregated_output=item.get("aggregatedOutput"),
                status=item.get("status"),
            )
        return msg
    if kind == "fileChange":
        msg = {
            "type": "patch_apply_begin" if started else "patch_apply_end",
            "call_id": item.get("id"),
            "turn_id": params.get("turnId"),
            "changes": item.get("changes"),
        }
        if not started:
            msg.update(status=item.get("status"), success=item.get("status") == "completed")
        return msg
    return None


def _command_approval(params: JsonObject) -> JsonObject:
    return {
        "type": "exec_approval_request",
        "call_id": params.get("itemId"),
        "turn_id": params.get("turnId"),
        "command": _argv(params.get("command")),
        "cwd": params.get("cwd"),
        "reason": params.get("reason"),
    }


def _patch_approval(params: JsonObject) -> JsonObject:
    return {
        "type": "apply_patch_approval_request",
        "call_id": params.get("itemId"),
        "turn_id": params.get("turnId"),
        "reason": params.get("reason"),
        "grant_root": params.get("grantRoot"),
    }


_MAPPERS: Final[dict[str, Mapper]] = {
    protocol.THREAD_STARTED: _session_configured,
    protocol.TURN_STARTED: _turn_started,
    protocol.TURN_COMPLETED: _turn_completed,
    protocol.ITEM_STARTED: lambda params: _item(params, started=True),
    protocol.ITEM_COMPLETED: lambda params: _item(params, started=False),
    protocol.COMMAND_APPROVAL: _command_approval,
    protocol.FILE_CHANGE_APPROVAL: _patch_approval,
    protocol.ERROR: lambda params: {
        "type": "stream_error" if params.get("willRetry") else "error",
        "message": (params.get("error") or {}).get("message"),
    },
    "warning": lambda params: {"type": "warning", "message": params.get("message")},
    "item/agentMessage/delta": lambda params: {
        "type": "agent_message_delta",
        "delta": params.get("delta"),
    },
    "item/reasoning/summaryTextDelta": lambda params: {
        "type": "agent_reasoning_delta",
        "delta": params.get("delta"),
    },
    "item/commandExecution/outputDelta": lambda params: {
        "type": "exec_command_output_delta",
        "call_id": params.get("itemId"),
        "delta": params.get("delta"),
    },
    "turn/diff/updated": lambda params: {"type": "turn_diff", "unified_diff": params.get("diff")},
    "thread/tokenUsage/updated": lambda params: {
        "type": "token_count",
        "info": params.get("tokenUsage"),
    },
}
