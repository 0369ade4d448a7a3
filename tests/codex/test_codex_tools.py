"""The MCP side as plain functions: tool definitions as 0.153.4 had them, argument parsing,
the approval elicitation and the reading of its reply, `codex/event` envelopes."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from codex_mcp.codex import elicitation, events, tools
from codex_mcp.codex.errors import InvalidCodexArguments, UnknownThread
from codex_mcp.codex.protocol import (
    COMMAND_APPROVAL,
    FILE_CHANGE_APPROVAL,
    ApprovalDetails,
    ThreadOptions,
    read_approval,
)
from codex_mcp.codex.run import CodexEvent, TurnResult

FIXTURES = Path(__file__).parent / "fixtures"


def legacy(name: str) -> Any:
    return json.loads((FIXTURES / f"mcp_server_0.153.4_{name}.json").read_text())


def legacy_elicitation(name: str) -> dict[str, Any]:
    [request] = [
        entry["from_server"]
        for entry in legacy(name)
        if entry.get("from_server", {}).get("method") == "elicitation/create"
    ]
    return dict(request["params"])


# -- definitions ----------------------------------------------------------------------
@pytest.mark.parametrize("name", ["codex", "codex-reply"])
def test_tools_are_defined_as_the_removed_server_defined_them(name: str) -> None:
    [old] = [tool for tool in legacy("tools_list")["result"]["tools"] if tool["name"] == name]
    [new] = [tool for tool in tools.TOOLS if tool["name"] == name]
    assert {key: value for key, value in new.items() if key != "annotations"} == old
    assert new["annotations"]["readOnlyHint"] is False


# -- arguments --------------------------------------------------------------------------
def test_codex_arguments_map_onto_thread_options(tmp_path: Path) -> None:
    prompt, options = tools.parse_codex_arguments(
        {
            "prompt": "fix the bug",
            "approval-policy": "on-request",
            "sandbox": "workspace-write",
            "cwd": "sub/dir",
            "model": "gpt-5.2-codex",
            "config": {"model_reasoning_effort": "high"},
            "base-instructions": "base",
            "developer-instructions": "dev",
            "compact-prompt": "compact",
        },
        base_cwd=str(tmp_path),
    )
    assert prompt == "fix the bug"
    assert options == ThreadOptions(
        model="gpt-5.2-codex",
        cwd=str(tmp_path / "sub/dir"),
        approval_policy="on-request",
        sandbox="workspace-write",
        config={"model_reasoning_effort": "high"},
        base_instructions="base",
        developer_instructions="dev",
        compact_prompt="compact",
    )


def test_a_relative_cwd_is_resolved_against_the_servers_directory() -> None:
    _, options = tools.parse_codex_arguments({"prompt": "x", "cwd": "."})
    assert options.cwd == os.getcwd()


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ({}, "missing required argument 'prompt'"),
        ({"prompt": 3}, "argument 'prompt' must be a string, not a number"),
        ({"prompt": "x", "sandbox": "yolo"}, "'sandbox' must be one of read-only, workspace"),
        ({"prompt": "x", "approval-policy": "untrusted"}, "one of on-request, never"),
        ({"prompt": "x", "config": "a=b"}, "argument 'config' must be an object, not a string"),
        ({"prompt": "x", "cwd": ["a"]}, "argument 'cwd' must be a string, not an array"),
        ({"prompt": "x", "approval_policy": "never"}, "unknown argument(s) 'approval_policy'"),
    ],
)
def test_bad_codex_arguments_are_named(arguments: dict[str, Any], message: str) -> None:
    with pytest.raises(InvalidCodexArguments) as caught:
        tools.parse_codex_arguments(arguments)
    assert message in caught.value.message


def test_reply_arguments_take_thread_id_or_the_deprecated_conversation_id() -> None:
    assert tools.parse_reply_arguments({"prompt": "p", "threadId": "t"}) == ("t", "p")
    assert tools.parse_reply_arguments({"prompt": "p", "conversationId": "c"}) == ("c", "p")
    assert tools.parse_reply_arguments({"prompt": "p", "threadId": "t", "conversationId": "c"}) == (
        "t",
        "p",
    )
    with pytest.raises(InvalidCodexArguments, match="missing argument 'threadId'"):
        tools.parse_reply_arguments({"prompt": "p"})
    with pytest.raises(InvalidCodexArguments, match="missing required argument 'prompt'"):
        tools.parse_reply_arguments({"threadId": "t"})


# -- results ---------------------------------------------------------------------------
def test_results_carry_thread_id_and_content_as_text_and_structured_content() -> None:
    result = tools.tool_result(TurnResult("thread-1", "turn-1", "All done."))
    assert result == {
        "content": [{"type": "text", "text": "All done."}],
        "structuredContent": {"threadId": "thread-1", "content": "All done."},
    }


def test_errors_are_is_error_results_naming_the_thread_when_there_is_one() -> None:
    error = UnknownThread("Session not found for thread_id: t", "t")
    assert tools.error_result(error) == {
        "isError": True,
        "content": [{"type": "text", "text": "Session not found for thread_id: t"}],
        "structuredContent": {"threadId": "t", "content": "Session not found for thread_id: t"},
    }
    assert "structuredContent" not in tools.error_result(InvalidCodexArguments("bad"))


# -- elicitation --------------------------------------------------------------------------
COMMAND_REQUEST = {
    "kind": "command",
    "threadId": "thread-1",
    "turnId": "turn-1",
    "itemId": "call-1",
    "reason": "needs to write a file",
    "command": "/bin/bash -lc 'echo hi > made.txt'",
    "cwd": "/work",
    "commandActions": [{"type": "unknown", "command": "echo hi > made.txt"}],
}


def test_a_command_elicitation_is_standard_and_keeps_the_old_fields() -> None:
    details = read_approval(COMMAND_APPROVAL, COMMAND_REQUEST, {})
    params = elicitation.approval_request("command", details, 7)
    assert params["message"] == (
        "needs to write a file\nAllow Codex to run `/bin/bash -lc 'echo hi > made.txt'` in `/work`?"
    )
    assert params["requestedSchema"] == {"type": "object", "properties": {}}
    assert params["codex_command"] == ["/bin/bash", "-lc", "echo hi > made.txt"]
    assert params["codex_parsed_cmd"] == [{"type": "unknown", "cmd": "echo hi > made.txt"}]
    assert (params["codex_cwd"], params["codex_call_id"]) == ("/work", "call-1")
    assert (params["codex_mcp_tool_call_id"], params["codex_event_id"]) == ("7", "turn-1")
    assert params["threadId"] == "thread-1"
    # Every field the removed server sent is there, with a value of the same JSON type.
    old = legacy_elicitation("exec_approval")
    assert set(old) <= set(params)
    assert {key: type(value) for key, value in old.items()} == {
        key: type(params[key]) for key in old
    }


def test_a_patch_elicitation_lists_the_changes_in_both_shapes() -> None:
    change = {"path": "/work/a.txt", "kind": {"type": "add"}, "diff": "new line\n"}
    update = {"path": "/work/b.txt", "kind": {"type": "update", "move_path": None}, "diff": "@@"}
    items = {"call-2": {"type": "fileChange", "id": "call-2", "changes": [change, update]}}
    request = {"threadId": "thread-1", "turnId": "turn-1", "itemId": "call-2", "reason": None}
    details = read_approval(FILE_CHANGE_APPROVAL, request, items)
    params = elicitation.approval_request("patch", details, "req-9")
    assert params["message"] == (
        "Allow Codex to apply proposed code changes?\nA /work/a.txt\nnew line\nM /work/b.txt\n@@"
    )
    assert params["codex_elicitation"] == "patch-approval"
    assert params["codex_changes"] == {
        "/work/a.txt": {"type": "add", "content": "new line\n"},
        "/work/b.txt": {"type": "update", "unified_diff": "@@", "move_path": None},
    }
    old = legacy_elicitation("patch_approval")
    assert set(old) <= set(params)
    [old_change] = old["codex_changes"].values()
    assert set(old_change) == set(params["codex_changes"]["/work/a.txt"])


def test_a_long_patch_is_cut_in_the_message_but_whole_in_the_fields() -> None:
    big = {"path": "/work/big.txt", "kind": {"type": "add"}, "diff": "x" * 10_000}
    details = ApprovalDetails("t", None, "c", changes=[big])
    params = elicitation.approval_request("patch", details, 1)
    assert len(params["message"]) < 5_000
    assert params["message"].endswith("[... truncated]")
    assert params["codex_changes"]["/work/big.txt"]["content"] == "x" * 10_000


@pytest.mark.parametrize(
    ("reply", "approved"),
    [
        ({"action": "accept"}, True),
        ({"action": "accept", "content": {}}, True),
        ({"action": "decline"}, False),
        ({"action": "cancel"}, False),
        ({"decision": "approved"}, True),
        ({"decision": "approved_for_session"}, True),
        (
            {"decision": {"approved_execpolicy_amendment": {"proposed_execpolicy_amendment": []}}},
            True,
        ),
        ({"decision": "denied"}, False),
        ({"decision": {"denied": {"rejection": "no"}}}, False),
        ({"decision": "abort"}, False),
        ({"decision": "timed_out"}, False),
        ({"action": "decline", "decision": "approved"}, False),
        ({"action": "ACCEPT"}, False),
        ({"decision": "yes please"}, False),
        ({"approved": True}, False),
        ({}, False),
        (None, False),
        ("accept", False),
        ([{"action": "accept"}], False),
    ],
)
def test_replies_old_and_new_are_read_and_anything_else_is_a_no(reply: Any, approved: bool) -> None:
    assert elicitation.approved(reply) is approved


# -- codex/event ------------------------------------------------------------------------
def test_events_carry_request_and_thread_ids_in_the_old_envelope() -> None:
    turn = {
        "id": "turn-1",
        "status": "completed",
        "items": [{"type": "agentMessage", "id": "m", "text": "bye"}],
    }
    event = CodexEvent("turn/completed", {"threadId": "thread-1", "turn": turn}, "thread-1")
    assert events.event_params(event, 12) == {
        "_meta": {"requestId": 12, "threadId": "thread-1"},
        "id": "turn-1",
        "msg": {
            "type": "task_complete",
            "turn_id": "turn-1",
            "last_agent_message": "bye",
            "duration_ms": None,
        },
    }


def test_events_old_callers_read_keep_their_old_types() -> None:
    command = {
        "type": "commandExecution",
        "id": "call-1",
        "command": "/bin/bash -lc 'ls -a'",
        "cwd": "/work",
        "exitCode": 0,
        "aggregatedOutput": ".\n..\n",
        "status": "completed",
    }
    params = {"threadId": "t", "turnId": "turn-1", "item": command}
    assert events.legacy_msg("item/completed", params) == {
        "type": "exec_command_end",
        "call_id": "call-1",
        "turn_id": "turn-1",
        "command": ["/bin/bash", "-lc", "ls -a"],
        "cwd": "/work",
        "exit_code": 0,
        "aggregated_output": ".\n..\n",
        "status": "completed",
    }
    assert events.legacy_msg("item/commandExecution/requestApproval", COMMAND_REQUEST)["type"] == (
        "exec_approval_request"
    )
    message = {"threadId": "t", "item": {"type": "agentMessage", "text": "hi", "phase": None}}
    assert events.legacy_msg("item/completed", message) == {
        "type": "agent_message",
        "message": "hi",
        "phase": None,
    }


def test_other_events_pass_through_under_their_app_server_name() -> None:
    params = {"threadId": "t", "status": {"type": "idle"}}
    assert events.legacy_msg("thread/status/changed", params) == {
        "threadId": "t",
        "status": {"type": "idle"},
        "type": "thread/status/changed",
    }
