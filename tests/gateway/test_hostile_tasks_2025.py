"""Hostile input to the gateway's 2025-11-25 tasks (specs/gateway.md, "Relaying": Tasks of
2025-11-25): another session's task ids (get, result, cancel, list), made-up and child ids,
malformed `params.task` and `taskId`, more tasks than a session may hold, a session that
closes with tasks running, and a child whose task answers are malformed.

Real processes throughout: the gateway as `codex-mcp` (stdio) or `codex-mcp-http`, its child
`servers/task_server.py` (raw JSON-RPC, small counter task ids), our client."""

from __future__ import annotations

import os
import re
import signal
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from codex_mcp.client import Client, McpError
from codex_mcp.gateway.relay.front_tasks import NOT_FOUND
from codex_mcp.gateway.relay.task_handles import MAX_TASKS_PER_SESSION

from .gateway_helpers import (
    BROKEN,
    PY,
    SERVERS,
    gateway,
    launch_http_gateway,
    status,
    stdio,
    stop,
    until,
    write_config,
)

TASKS = [PY, str(SERVERS / "task_server.py")]
V = "2025-11-25"


def _config(tmp_path: Path, *args: str) -> Path:
    return write_config(tmp_path, {"t": stdio(TASKS, *args)})


@pytest.fixture
def http_gateway(tmp_path: Path) -> Iterator[tuple[str, list[str]]]:
    """The gateway of the task server over HTTP, with the child's stderr in its log."""
    log: list[str] = []
    process, url = launch_http_gateway(_config(tmp_path), log=log, DEBUG="1")
    yield url, log
    stop(process)


async def _error(work: Any) -> McpError:
    with pytest.raises(McpError) as caught:
        await work
    return caught.value


async def _create(client: Client, seconds: float = 30.0, **task: Any) -> str:
    created = await client.request(
        "tools/call", {"name": "t__work", "arguments": {"seconds": seconds}, "task": task}
    )
    assert created["task"]["status"] in ("working", "completed")
    return str(created["task"]["taskId"])


async def test_another_sessions_task_is_unknown_to_it(http_gateway: tuple[str, list[str]]) -> None:
    url, _ = http_gateway
    async with (
        Client.http(url, protocol_version=V) as a,
        Client.http(url, protocol_version=V) as b,
    ):
        assert "tasks" in a.server_capabilities and "tasks" in b.server_capabilities
        mine = await _create(a)
        # The gateway's id, not the child's counter, and not guessable.
        assert len(mine) >= 24 and not mine.isdigit()
        for method in ("tasks/get", "tasks/result", "tasks/cancel"):
            foreign = await _error(b.request(method, {"taskId": mine}, timeout=10))
            unknown = await _error(b.request(method, {"taskId": "no-such-task"}, timeout=10))
            child_id = await _error(a.request(method, {"taskId": "1"}, timeout=10))
            assert (foreign.code, foreign.message) == (-32602, NOT_FOUND)
            assert (unknown.code, unknown.message) == (foreign.code, foreign.message)
            assert (child_id.code, child_id.message) == (foreign.code, foreign.message)
        assert (await b.request("tasks/list", {}))["tasks"] == []
        # B's cancel reached nothing: A's task runs on, and A may cancel it.
        assert (await a.request("tasks/get", {"taskId": mine}))["status"] == "working"
        listed = (await a.request("tasks/list", {}))["tasks"]
        assert [task["taskId"] for task in listed] == [mine]
        cancelled = await a.request("tasks/cancel", {"taskId": mine})
        assert cancelled["status"] == "cancelled" and cancelled["taskId"] == mine
        again = await _error(a.request("tasks/cancel", {"taskId": mine}))
        assert again.code == -32602  # the child refuses to cancel an ended task


@pytest.mark.parametrize(
    "task",
    ["x", 5, [], True, {"ttl": "1000"}, {"ttl": -1}, {"ttl": True}, {"ttl": 1e300}, {"ttl": []}],
)
async def test_malformed_task_params_are_refused(tmp_path: Path, task: Any) -> None:
    async with gateway(_config(tmp_path), protocol_version=V) as client:
        error = await _error(
            client.request("tools/call", {"name": "t__work", "arguments": {}, "task": task})
        )
        assert error.code == -32602 and "task" in error.message
        assert (await client.request("tasks/list", {}))["tasks"] == []


async def test_malformed_task_ids_and_calls(tmp_path: Path) -> None:
    async with gateway(_config(tmp_path), protocol_version=V) as client:
        for task_id in (5, None, [], {}, 1.5, "x" * 100_000):
            for method in ("tasks/get", "tasks/result", "tasks/cancel"):
                error = await _error(client.request(method, {"taskId": task_id}, timeout=10))
                assert error.code == -32602
        # A tool that does not run as a task, and one the gateway does not have.
        plain = await _error(
            client.request("tools/call", {"name": "t__plain", "arguments": {}, "task": {}})
        )
        assert plain.code == -32601
        unknown = await _error(
            client.request("tools/call", {"name": "t__nope", "arguments": {}, "task": {}})
        )
        assert unknown.code == -32602
        bad_args = await _error(
            client.request("tools/call", {"name": "t__work", "arguments": [], "task": {}})
        )
        assert bad_args.code == -32602
        # A null task is no task: the optional tool answers plainly.
        plain_call = await client.request(
            "tools/call", {"name": "t__maybe", "arguments": {}, "task": None}
        )
        assert plain_call["content"][0]["text"] == "done: maybe"


async def test_ttl_is_passed_on_and_nothing_else(tmp_path: Path) -> None:
    from .gateway_helpers import Lines

    errlog = Lines()
    async with gateway(
        _config(tmp_path), protocol_version=V, errlog=errlog, env={"DEBUG": "1"}
    ) as client:
        task_id = await _create(client, 0.05, ttl=1234, extra={"deep": [1, 2]})
        await errlog.wait_for(r"task \d+ ttl 1234$")
        result = await client.request("tasks/result", {"taskId": task_id}, timeout=30)
        assert result["content"][0]["text"] == "done: work"
        # tasks/result names the task by our id, never the child's.
        assert result["_meta"]["io.modelcontextprotocol/related-task"] == {"taskId": task_id}
        await _create(client, 0.05)
        await errlog.wait_for(r"task \d+ ttl 60000$")  # no ttl asked: the child's own


async def test_tasks_of_a_session_are_bounded(tmp_path: Path) -> None:
    async with gateway(_config(tmp_path), protocol_version=V) as client:
        ids = [await _create(client, 60) for _ in range(MAX_TASKS_PER_SESSION)]
        refused = await _error(
            client.request("tools/call", {"name": "t__work", "arguments": {}, "task": {}})
        )
        assert refused.code == -32600 and "too many tasks" in refused.message
        # One ends: room for one more, the ended one making way (its id is unknown then).
        await client.request("tasks/cancel", {"taskId": ids[0]})
        newest = await _create(client, 60)
        listed = {task["taskId"] for task in (await client.request("tasks/list", {}))["tasks"]}
        assert len(listed) == MAX_TASKS_PER_SESSION and newest in listed and ids[0] not in listed
        gone = await _error(client.request("tasks/get", {"taskId": ids[0]}))
        assert gone.message == NOT_FOUND
        # Rounds of short tasks: what the session holds never grows past the cap.
        for task_id in ids[1:]:
            await client.request("tasks/cancel", {"taskId": task_id})
        for _ in range(3 * MAX_TASKS_PER_SESSION // 2):
            done = await _create(client, 0)
            await client.request("tasks/result", {"taskId": done}, timeout=30)
        listed = {task["taskId"] for task in (await client.request("tasks/list", {}))["tasks"]}
        assert len(listed) <= MAX_TASKS_PER_SESSION


async def test_a_closed_sessions_tasks_are_cancelled(http_gateway: tuple[str, list[str]]) -> None:
    url, log = http_gateway
    async with Client.http(url, protocol_version=V) as a:
        mine = await _create(a, 60)
    # Session A is gone (DELETE): nobody can reach its task, so the child is told to stop it.
    await until(
        lambda: any(
            re.search(r"its task was cancelled, as its client is gone", line) for line in log
        ),
        20,
    )
    async with Client.http(url, protocol_version=V) as b:
        error = await _error(b.request("tasks/get", {"taskId": mine}))
        assert error.message == NOT_FOUND


async def test_a_child_with_malformed_task_answers(tmp_path: Path) -> None:
    async with gateway(_config(tmp_path, "--hostile"), protocol_version=V) as client:
        task_id = await _create_hostile(client)
        task = await client.request("tasks/get", {"taskId": task_id})
        assert task["taskId"] == task_id and task["status"] == ["working"]
        result = await client.request("tasks/result", {"taskId": task_id}, timeout=30)
        assert result["content"][0]["text"] == "done: work"
        # Its status notification with an unhashable related task broke nothing.
        assert (await client.request("tools/call", {"name": "t__plain", "arguments": {}}))[
            "content"
        ][0]["text"] == "done: plain"


async def _create_hostile(client: Client) -> str:
    created = await client.request(
        "tools/call", {"name": "t__work", "arguments": {"seconds": 0.1}, "task": {}}
    )
    return str(created["task"]["taskId"])


async def test_no_child_with_tasks_no_capability(tmp_path: Path) -> None:
    config = write_config(tmp_path, {"brk": stdio(BROKEN, "--tools", "echo")})
    async with gateway(config, protocol_version=V) as client:
        assert "tasks" not in client.server_capabilities
        for method in ("tasks/get", "tasks/result", "tasks/cancel", "tasks/list"):
            error = await _error(client.request(method, {"taskId": "x"}))
            assert error.code == -32601
        # Not declared, so a task in the call is ignored (the spec's rule for a receiver).
        result = await client.request(
            "tools/call", {"name": "brk__echo", "arguments": {"text": "hi"}, "task": {"ttl": 5}}
        )
        assert "task" not in result and result["content"]


async def test_an_older_front_gets_no_tasks_and_a_plain_answer(tmp_path: Path) -> None:
    """A front of 2025-06-18 (Codex 0.171's revision) is not told of tasks; a task-required
    tool it calls plainly is answered: the gateway follows the child's task to its end."""
    async with gateway(_config(tmp_path), protocol_version="2025-06-18") as client:
        assert "tasks" not in client.server_capabilities
        tools = {tool.name: tool for tool in await client.list_tools()}
        assert tools["t__work"].raw["execution"] == {"taskSupport": "required"}
        result = await client.request(
            "tools/call", {"name": "t__work", "arguments": {"seconds": 0.1}}, timeout=30
        )
        assert result["content"][0]["text"] == "done: work"
        assert "_meta" not in result  # the child's task id stays in the gateway


@pytest.mark.parametrize("order", [(), ("--ask-first",)], ids=["after", "before_created"])
async def test_a_childs_question_names_our_task(tmp_path: Path, order: tuple[str, ...]) -> None:
    """The child's elicitation, tied to its task, names our id: also when the child sends it
    before its CreateTaskResult (the gateway waits for that answer to know the id)."""
    asked: list[dict[str, Any]] = []

    async def answer(params: dict[str, Any], _ctx: Any) -> dict[str, Any]:
        asked.append(params)
        return {"action": "accept", "content": {"x": "this one"}}

    config = _config(tmp_path, *order)
    async with gateway(config, protocol_version=V, elicitation_handler=answer) as client:
        created = await client.request(
            "tools/call", {"name": "t__ask", "arguments": {}, "task": {}}
        )
        task_id = created["task"]["taskId"]
        result = await client.request("tasks/result", {"taskId": task_id}, timeout=30)
        assert "this one" in result["content"][0]["text"]
        assert asked and asked[0]["_meta"]["io.modelcontextprotocol/related-task"] == {
            "taskId": task_id
        }


async def test_a_restarted_childs_tasks_are_lost(tmp_path: Path) -> None:
    async with gateway(_config(tmp_path), protocol_version=V) as client:
        task_id = await _create(client, 60)
        pid = (await status(client))["t"]["pid"]
        os.kill(pid, signal.SIGKILL)
        # Restarted (a new pid): the task it held is gone with the old process.
        await until(lambda: _restarted(client, pid), 30, "the child restarted")
        task = await client.request("tasks/get", {"taskId": task_id})
        assert task["status"] == "failed" and "stopped" in task["statusMessage"]
        error = await _error(client.request("tasks/result", {"taskId": task_id}))
        assert error.code == -32603 and "'t'" in error.message
        # A new task on the new process works.
        fresh = await _create(client, 0.05)
        result = await client.request("tasks/result", {"taskId": fresh}, timeout=30)
        assert result["content"][0]["text"] == "done: work"


async def _restarted(client: Client, old_pid: int) -> bool:
    child = (await status(client))["t"]
    return child["state"] == "ready" and child["pid"] not in (None, old_pid)


async def test_an_idle_timeout_waits_for_the_tasks_it_holds(tmp_path: Path) -> None:
    """No request in flight for longer than the child's idle timeout, but a task running on
    it: it is not stopped under the task. Its end is heard as a status notification, under
    our id."""
    statuses: list[dict[str, Any]] = []

    def heard(method: str, params: dict[str, Any]) -> None:
        if method == "notifications/tasks/status":
            statuses.append(params)

    config = write_config(tmp_path, {"t": stdio(TASKS, idle_timeout_sec=0.3)})
    async with gateway(config, protocol_version=V, on_notification=heard) as client:
        task_id = await _create(client, 1.5)
        await until(lambda: any(s["status"] == "completed" for s in statuses), 30)
        assert {s["taskId"] for s in statuses} == {task_id}
        result = await client.request("tasks/result", {"taskId": task_id}, timeout=30)
        assert result["content"][0]["text"] == "done: work"
