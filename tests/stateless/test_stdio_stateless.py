"""2026-07-28 over stdio: one server process serves stateless requests statelessly, per
request, beside a legacy `initialize` session (the examples server as a subprocess)."""

from __future__ import annotations

import os
from typing import Any

from .conftest import StatelessStdio
from .stateless_helpers import (
    LOG_LEVEL,
    SERVER_INFO,
    SUBSCRIPTION_ID,
    TASKS,
    VERSION,
    accept,
    envelope,
    params,
    text_of,
)

Start = Any


def test_discover_answers_the_dual_era_probe(examples: Start) -> None:
    peer: StatelessStdio = examples()
    reply = peer.ask(1, "server/discover", params())
    result = reply["result"]
    assert result["resultType"] == "complete"
    assert result["supportedVersions"] == ["2026-07-28"]
    capabilities = result["capabilities"]
    assert {"tools", "resources", "prompts", "completions", "logging"} <= set(capabilities)
    # The tasks extension, and the skills the everything server serves (specs/skills.md).
    assert capabilities["extensions"] == {
        TASKS: {},
        "io.modelcontextprotocol/skills": {"directoryRead": True},
    }
    assert "tasks" not in capabilities  # the extension's slot only
    assert result["_meta"][SERVER_INFO]["name"] == "codex-mcp-everything"
    assert result["ttlMs"] == 0 and result["cacheScope"] == "private"
    assert "instructions" in result


def test_envelope_errors(examples: Start) -> None:
    peer: StatelessStdio = examples()
    missing = peer.ask(1, "server/discover", {})
    assert missing["error"]["code"] == -32602 and "missing _meta" in missing["error"]["message"]
    no_version = peer.ask(2, "tools/list", {"_meta": {"io.modelcontextprotocol/clientInfo": {}}})
    assert no_version["error"]["code"] == -32602
    old = peer.ask(3, "tools/list", {"_meta": envelope(**{VERSION: "1900-01-01"})})
    assert old["error"] == {
        "code": -32022,
        "message": "Unsupported protocol version",
        "data": {"supported": ["2026-07-28"], "requested": "1900-01-01"},
    }
    bad_level = peer.ask(4, "tools/list", {"_meta": envelope(**{LOG_LEVEL: "loud"})})
    assert bad_level["error"]["code"] == -32602
    for n, removed in enumerate(["initialize", "ping", "logging/setLevel", "resources/subscribe"]):
        assert peer.ask(10 + n, removed, params())["error"]["code"] == -32601, removed
    assert peer.ask(20, "tasks/list", params())["error"]["code"] == -32601
    peer.assert_alive()  # legacy ping, on the same process, still works


def test_both_eras_on_one_process(examples: Start) -> None:
    peer: StatelessStdio = examples()
    stateless = peer.ask(1, "tools/call", params(name="greet", arguments={"name": "Ada"}))
    assert stateless["result"]["resultType"] == "complete"
    assert text_of(stateless["result"]) == "Hello, Ada!"
    legacy_init = peer.initialize("2025-06-18")
    assert legacy_init["result"]["protocolVersion"] == "2025-06-18"
    legacy = peer.call(2, "tools/call", {"name": "greet", "arguments": {"name": "Bo"}})
    assert legacy["result"] == {"content": [{"type": "text", "text": "Hello, Bo!"}]}
    # After the handshake, a stateless request is still served statelessly (per request).
    again = peer.ask(3, "tools/call", params(name="greet", arguments={"name": "Cy"}))
    assert again["result"]["_meta"][SERVER_INFO]["version"]
    tools = peer.ask(4, "tools/list", params())["result"]
    assert tools["ttlMs"] == 0 and tools["cacheScope"] == "private"
    assert tools["tools"][0]["name"] == "test_simple_text"  # registration order


def test_an_elicitation_round(examples: Start) -> None:
    peer: StatelessStdio = examples()
    call = {"name": "test_input_required_result_elicitation", "arguments": {}}
    first = peer.ask(1, "tools/call", params(**call))["result"]
    assert first["resultType"] == "input_required"
    assert first["inputRequests"] == {
        "user_name": {
            "method": "elicitation/create",
            "params": {
                "mode": "form",
                "message": "What is your name?",
                "requestedSchema": {
                    "type": "object",
                    "properties": {"name": {"type": "string"}},
                    "required": ["name"],
                },
            },
        }
    }
    assert "ttlMs" not in first  # never cached
    retry = params(**call, inputResponses={"user_name": accept(name="Alice")})
    retry["requestState"] = first["requestState"]
    done = peer.ask(2, "tools/call", retry)["result"]
    assert done["resultType"] == "complete"
    assert text_of(done) == "Hello, Alice!"
    # The state is single-use: the same retry again is a replay.
    replayed = peer.ask(3, "tools/call", retry)
    assert replayed["error"]["code"] == -32602
    assert replayed["error"]["data"] == {"reason": "replayed"}


def test_tampered_wrong_and_malformed_retries_are_refused(examples: Start) -> None:
    peer: StatelessStdio = examples()
    call = {"name": "test_input_required_result_tampered_state", "arguments": {}}
    state = peer.ask(1, "tools/call", params(**call))["result"]["requestState"]
    answers = {"confirm": accept(ok=True)}
    tampered = peer.ask(
        2, "tools/call", params(**call, inputResponses=answers, requestState=state + "-TAMPERED")
    )
    assert tampered["error"]["data"] == {"reason": "tampered"}
    other_tool = {"name": "test_input_required_result_request_state", "arguments": {}}
    wrong = peer.ask(
        3, "tools/call", params(**other_tool, inputResponses=answers, requestState=state)
    )
    assert wrong["error"]["data"] == {"reason": "wrong_request"}
    for n, bad in enumerate([None, 12345, [1]]):
        refused = peer.ask(10 + n, "tools/call", params(**call, inputResponses=bad))
        assert refused["error"]["code"] == -32602, bad
    not_a_result = peer.ask(20, "tools/call", params(**call, inputResponses={"confirm": 12345}))
    assert "inputResponses['confirm']" in not_a_result["error"]["message"]
    # A wrong key is asked again (a re-request, not an error); extra keys are ignored.
    asked_again = peer.ask(21, "tools/call", params(**call, inputResponses={"nope": accept()}))
    assert asked_again["result"]["resultType"] == "input_required"
    extra = {"confirm": accept(ok=False), "extra": accept(x=1)}
    finished = peer.ask(22, "tools/call", params(**call, inputResponses=extra))
    assert text_of(finished["result"]) == "confirmed=False"


def test_three_questions_in_one_round_then_two_rounds(examples: Start) -> None:
    peer: StatelessStdio = examples()
    call = {"name": "test_input_required_result_multiple_inputs", "arguments": {}}
    first = peer.ask(1, "tools/call", params(**call))["result"]
    methods = {key: request["method"] for key, request in first["inputRequests"].items()}
    assert methods == {
        "user_name": "elicitation/create",
        "greeting": "sampling/createMessage",
        "client_roots": "roots/list",
    }
    answers = {
        "user_name": accept(name="Ann"),
        "greeting": {"role": "assistant", "content": {"type": "text", "text": "Hi"}, "model": "m"},
        "client_roots": {"roots": [{"uri": "file:///a"}, {"uri": "file:///b"}]},
    }
    done = peer.ask(
        2, "tools/call", params(**call, inputResponses=answers, requestState=first["requestState"])
    )
    assert text_of(done["result"]) == "Hi Ann (2 roots)"

    call = {"name": "test_input_required_result_multi_round", "arguments": {}}
    r1 = peer.ask(3, "tools/call", params(**call))["result"]
    assert list(r1["inputRequests"]) == ["step1"]
    r2 = peer.ask(
        4,
        "tools/call",
        params(
            **call, inputResponses={"step1": accept(name="Ed")}, requestState=r1["requestState"]
        ),
    )["result"]
    assert list(r2["inputRequests"]) == ["step2"] and r2["requestState"] != r1["requestState"]
    r3 = peer.ask(
        5,
        "tools/call",
        params(
            **call, inputResponses={"step2": accept(color="red")}, requestState=r2["requestState"]
        ),
    )["result"]
    assert text_of(r3) == "Ed likes red"


def test_a_prompt_asks_too(examples: Start) -> None:
    peer: StatelessStdio = examples()
    call = {"name": "test_input_required_result_prompt"}
    first = peer.ask(1, "prompts/get", params(**call))["result"]
    assert list(first["inputRequests"]) == ["user_context"]
    done = peer.ask(
        2,
        "prompts/get",
        params(
            **call,
            inputResponses={"user_context": accept(context="tests")},
            requestState=first["requestState"],
        ),
    )["result"]
    assert done["resultType"] == "complete"
    assert done["messages"][0]["content"]["text"] == "Use this context: tests"


def test_capabilities_come_from_each_request(examples: Start) -> None:
    peer: StatelessStdio = examples()
    sampling_only = params({"sampling": {}}, name="test_missing_capability", arguments={})
    assert peer.ask(1, "tools/call", sampling_only)["result"]["resultType"] == "input_required"
    refused = peer.ask(2, "tools/call", params({}, name="test_missing_capability", arguments={}))
    assert refused["error"]["code"] == -32021
    assert refused["error"]["data"] == {"requiredCapabilities": {"sampling": {}}}
    elicit_only = params(
        {"elicitation": {}}, name="test_input_required_result_list_roots", arguments={}
    )
    assert peer.ask(3, "tools/call", elicit_only)["error"]["data"] == {
        "requiredCapabilities": {"roots": {}}
    }
    # A legacy session's client declared no sampling at initialize: the tool fails, the
    # request does not (a tool error result, as before).
    peer.initialize()
    legacy = peer.call(4, "tools/call", {"name": "test_missing_capability", "arguments": {}})
    assert legacy["result"]["isError"] is True


def test_logs_only_at_the_requested_level_and_progress(examples: Start) -> None:
    peer: StatelessStdio = examples()
    call = {"name": "test_tool_with_logging", "arguments": {}}
    peer.request(1, "tools/call", params(**call))
    _, quiet = peer.answer(1)
    assert [m for m in quiet if m.get("method") == "notifications/message"] == []
    peer.request(2, "tools/call", params(**call, meta={LOG_LEVEL: "info"}))
    _, logged = peer.answer(2)
    logs = [m["params"] for m in logged if m.get("method") == "notifications/message"]
    assert [log["data"] for log in logs] == [
        "Tool execution started",
        "Tool processing data",
        "Tool execution completed",
    ]
    peer.request(3, "tools/call", params(**call, meta={LOG_LEVEL: "error"}))
    _, above = peer.answer(3)
    assert [m for m in above if m.get("method") == "notifications/message"] == []
    peer.request(
        4,
        "tools/call",
        params(name="test_tool_with_progress", arguments={}, meta={"progressToken": "p"}),
    )
    _, progress = peer.answer(4)
    assert [m["params"]["progress"] for m in progress] == [0, 50, 100]


def test_a_cancelled_modern_call_gets_no_answer(examples: Start) -> None:
    peer: StatelessStdio = examples()
    peer.request(1, "tools/call", params(name="slow_compute", arguments={"seconds": 30}, meta={}))
    peer.send({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 1}})
    # The next answer is the ping's: request 1 is never answered.
    assert peer.ask("after", "server/discover", params())["result"]["resultType"] == "complete"
    peer.assert_alive()


def test_listen_acknowledges_then_tags_what_was_asked(examples: Start) -> None:
    peer: StatelessStdio = examples()
    peer.request(
        "sub",
        "subscriptions/listen",
        params(notifications={"toolsListChanged": True, "resourceSubscriptions": ["test://x"]}),
    )
    ack = peer.read()
    assert ack == {
        "jsonrpc": "2.0",
        "method": "notifications/subscriptions/acknowledged",
        "params": {
            "_meta": {SUBSCRIPTION_ID: "sub"},
            "notifications": {"toolsListChanged": True, "resourceSubscriptions": ["test://x"]},
        },
    }
    peer.request(
        "narrow", "subscriptions/listen", params(notifications={"promptsListChanged": True})
    )
    assert peer.read()["params"]["_meta"] == {SUBSCRIPTION_ID: "narrow"}
    peer.request(1, "tools/call", params(name="test_trigger_tool_change", arguments={}))
    changed, seen = peer.answer(1)  # the change is announced while the tool runs
    assert "test_dynamic_tool" in text_of(changed["result"])
    tool_changes = [m for m in seen if m.get("method") == "notifications/tools/list_changed"]
    assert tool_changes == [
        {
            "jsonrpc": "2.0",
            "method": "notifications/tools/list_changed",
            "params": {"_meta": {SUBSCRIPTION_ID: "sub"}},
        }
    ]  # only the stream that asked for tools
    # Cancelling a subscription ends it without an answer; stdin EOF answers the other.
    peer.send(
        {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": "sub"}}
    )
    peer.close_stdin()
    ended = peer.read()
    assert ended["id"] == "narrow"
    assert ended["result"]["_meta"][SUBSCRIPTION_ID] == "narrow"
    assert peer.read_line() is None
    assert peer.process.wait(10) == 0


def test_a_list_change_made_by_a_call_leaves_before_its_answer_every_time(
    examples: Start,
) -> None:
    # The trigger is a plain function, so it runs in a worker thread; what it changes must
    # reach the listen stream before its answer, however the loop schedules the handoff
    # (on 3.14 an executor's result can reach the caller without a loop turn; see
    # specs/mcp-2026-07-28.md, "Ordering").
    peer: StatelessStdio = examples()
    peer.request("sub", "subscriptions/listen", params(notifications={"toolsListChanged": True}))
    assert peer.read()["method"] == "notifications/subscriptions/acknowledged"
    for call in range(1, 21):
        peer.request(call, "tools/call", params(name="test_trigger_tool_change", arguments={}))
        _, seen = peer.answer(call)
        changes = [m for m in seen if m.get("method") == "notifications/tools/list_changed"]
        assert len(changes) == 1, f"call {call}: {len(changes)} list_changed before its answer"


def test_a_task_from_creation_to_cancellation(examples: Start) -> None:
    peer: StatelessStdio = examples()
    created = peer.ask(
        1, "tools/call", params(name="slow_compute", arguments={"seconds": 30, "label": "x"})
    )["result"]
    assert created["resultType"] == "task" and created["status"] == "working"
    assert {"taskId", "createdAt", "lastUpdatedAt", "ttlMs", "pollIntervalMs"} <= set(created)
    task = {"taskId": created["taskId"]}
    got = peer.ask(2, "tasks/get", params(**task))["result"]
    assert got["resultType"] == "complete" and got["status"] == "working"
    assert peer.ask(3, "tasks/cancel", params(**task))["result"]["resultType"] == "complete"
    status = peer.task_until(task["taskId"], lambda t: t["status"] != "working")["status"]
    assert status == "cancelled"
    assert peer.ask(70, "tasks/cancel", params(**task))["result"]["resultType"] == "complete"
    # Without the extension declared on the request: -32021, and no task at all.
    no_ext = params({}, **task)
    assert peer.ask(71, "tasks/get", no_ext)["error"]["code"] == -32021
    sync = peer.ask(72, "tools/call", params({}, name="slow_compute", arguments={"seconds": 0}))
    assert sync["result"]["resultType"] == "complete"
    required = peer.ask(73, "tools/call", params({}, name="failing_job", arguments={}))
    assert required["error"]["data"] == {"requiredCapabilities": {"extensions": {TASKS: {}}}}
    unknown = peer.ask(74, "tasks/get", params(taskId="nope"))
    assert unknown["error"]["code"] == -32602


def test_a_task_asks_through_tasks_get_and_update(examples: Start) -> None:
    peer: StatelessStdio = examples()
    created = peer.ask(1, "tools/call", params(name="multi_input", arguments={}))["result"]
    task = {"taskId": created["taskId"]}
    got = peer.task_until(task["taskId"], lambda t: len(t.get("inputRequests", ())) == 2)
    assert set(got["inputRequests"]) == {"first", "second"}
    ack = peer.ask(200, "tasks/update", params(**task, inputResponses={"first": accept(name="a")}))
    assert ack["result"]["resultType"] == "complete" and "status" not in ack["result"]
    partial = peer.ask(201, "tasks/get", params(**task))["result"]
    assert partial["status"] == "input_required" and list(partial["inputRequests"]) == ["second"]
    peer.ask(202, "tasks/update", params(**task, inputResponses={"second": accept(name="b")}))
    done = peer.task_until(task["taskId"], lambda t: t["status"] == "completed")
    assert done["result"]["content"][0]["text"] == "a and b"


def test_input_before_the_task_is_asked_on_the_call(examples: Start) -> None:
    peer: StatelessStdio = examples()
    call = {"name": "test_tool_with_task", "arguments": {}}
    first = peer.ask(1, "tools/call", params(**call))["result"]
    assert first["resultType"] == "input_required" and "taskId" not in first
    created = peer.ask(
        2,
        "tools/call",
        params(
            **call,
            inputResponses={"user_name": accept(name="Alice")},
            requestState=first["requestState"],
        ),
    )["result"]
    assert created["resultType"] == "task" and "requestState" not in created
    done = peer.task_until(created["taskId"], lambda t: t["status"] == "completed")
    assert "Alice" in done["result"]["content"][0]["text"]


def test_a_round_started_on_one_process_finishes_on_another(examples: Start) -> None:
    key = {"CODEX_MCP_REQUEST_STATE_KEYS": "k" * 40}
    first_process: StatelessStdio = examples(env={**os.environ, **key})
    second_process: StatelessStdio = examples(env={**os.environ, **key})
    stranger: StatelessStdio = examples()  # its own random key
    call = {"name": "test_input_required_result_request_state", "arguments": {}}
    state = first_process.ask(1, "tools/call", params(**call))["result"]["requestState"]
    retry = params(**call, inputResponses={"confirm": accept(ok=True)}, requestState=state)
    assert stranger.ask(1, "tools/call", retry)["error"]["data"] == {"reason": "tampered"}
    done = second_process.ask(1, "tools/call", retry)["result"]
    assert done["resultType"] == "complete" and "state-ok: round 2" in text_of(done)


def test_task_status_reaches_a_listener(examples: Start) -> None:
    peer: StatelessStdio = examples()
    created = peer.ask(1, "tools/call", params(name="slow_compute", arguments={"seconds": 0.3}))[
        "result"
    ]
    peer.request(
        "sub", "subscriptions/listen", params(notifications={"taskIds": [created["taskId"], "x"]})
    )
    ack = peer.read()
    assert ack["params"]["notifications"] == {"taskIds": [created["taskId"]]}  # known ones only
    update = peer.read()  # the signal: no polling
    assert update["method"] == "notifications/tasks"
    assert update["params"]["status"] == "completed"
    assert update["params"]["taskId"] == created["taskId"]
    assert update["params"]["_meta"] == {SUBSCRIPTION_ID: "sub"}
    assert update["params"]["result"]["content"][0]["text"].startswith("computed")
    refused = peer.ask(
        2, "subscriptions/listen", params({}, notifications={"taskIds": [created["taskId"]]})
    )
    assert refused["error"]["code"] == -32021


def test_cache_hints_per_server_and_per_resource(examples: Start) -> None:
    peer: StatelessStdio = examples()
    static = peer.ask(1, "resources/read", params(uri="test://static-text"))["result"]
    assert (static["ttlMs"], static["cacheScope"]) == (60_000, "public")  # its own
    other = peer.ask(2, "resources/read", params(uri="test://template/7/data"))["result"]
    assert (other["ttlMs"], other["cacheScope"]) == (0, "private")  # the server's
    for n, method in enumerate(["prompts/list", "resources/list", "resources/templates/list"]):
        listed = peer.ask(10 + n, method, params())["result"]
        assert (listed["ttlMs"], listed["cacheScope"]) == (0, "private"), method
    called = peer.ask(20, "tools/call", params(name="greet", arguments={"name": "c"}))["result"]
    assert "ttlMs" not in called and "cacheScope" not in called  # not a cacheable result
