"""What app-server sends as `mcpServer/elicitation/request` is read as data from another
process: a field of the wrong type, a mode MCP has no form of, or a caller's answer we
cannot read is a decline, never an exception (app-server would wait for an answer)."""

from __future__ import annotations

from typing import Any

import pytest
from codex_mcp.codex import protocol

FORM = {
    "threadId": "t",
    "turnId": None,
    "serverName": "notes",
    "mode": "form",
    "message": "Allow?",
    "requestedSchema": {"type": "object", "properties": {}},
    "_meta": {"codex_approval_kind": "mcp_tool_call"},
}


def test_a_form_request_is_put_to_the_caller_as_mcp_elicitation() -> None:
    assert protocol.mcp_elicitation_request(FORM) == {
        "message": "Allow?",
        "requestedSchema": {"type": "object", "properties": {}},
        "_meta": {"codex_approval_kind": "mcp_tool_call"},
    }


def test_a_url_request_keeps_its_url_and_id() -> None:
    request = {**FORM, "mode": "url", "url": "https://example.test/x", "elicitationId": "e1"}
    del request["requestedSchema"]
    assert protocol.mcp_elicitation_request(request) == {
        "message": "Allow?",
        "_meta": {"codex_approval_kind": "mcp_tool_call"},
        "mode": "url",
        "url": "https://example.test/x",
        "elicitationId": "e1",
    }


@pytest.mark.parametrize(
    "change",
    [
        {"message": None},
        {"message": ["a"]},
        {"mode": "openai/form"},
        {"mode": "openaiForm"},
        {"mode": 7},
        {"requestedSchema": "object"},
        {"requestedSchema": None},
        {"mode": "url"},  # no url, no elicitationId
        {"mode": "url", "url": 5, "elicitationId": "e"},
        {"mode": "url", "url": "https://x.test", "elicitationId": {"id": 1}},
    ],
)
def test_a_request_with_no_mcp_form_is_declined(change: dict[str, Any]) -> None:
    assert protocol.mcp_elicitation_request({**FORM, **change}) is None


def test_a_meta_that_is_not_an_object_is_left_out() -> None:
    request = protocol.mcp_elicitation_request({**FORM, "_meta": "x"})
    assert request is not None and "_meta" not in request


@pytest.mark.parametrize(
    ("result", "answer"),
    [
        ({"action": "accept", "content": {"a": 1}}, {"action": "accept", "content": {"a": 1}}),
        ({"action": "accept"}, {"action": "accept", "content": None}),
        ({"action": "accept", "content": [1]}, {"action": "accept", "content": None}),
        ({"action": "decline", "content": {"a": 1}}, {"action": "decline", "content": None}),
        ({"action": "cancel"}, {"action": "cancel", "content": None}),
        ({"action": "yes"}, {"action": "decline", "content": None}),
        ({"action": None}, {"action": "decline", "content": None}),
        ({}, {"action": "decline", "content": None}),
    ],
)
def test_the_callers_answer_is_read_strictly(
    result: dict[str, Any], answer: dict[str, Any]
) -> None:
    assert protocol.mcp_elicitation_answer(result) == {**answer, "_meta": None}
