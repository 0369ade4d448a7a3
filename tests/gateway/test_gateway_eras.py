"""Both protocol eras through the gateway, over real child processes, with fronts of both eras
(our client in either era, the official SDK's client, the real Codex CLI).

A legacy child (our examples server, spoken to with `initialize`): under a 2026-07-28 front
its `elicitation/create` (sampling, roots) becomes an input-required round, or, when the front
declared tasks, makes the call the gateway's task with the question in its input_required.
A 2026-07-28-only child (tests/gateway/servers/stateless_only.py): its rounds are answered by
the front (`elicitation/create` for a legacy one), and its tasks are the gateway's own task
for a 2026-07-28 front, bound to that caller, or followed within the call for a legacy one."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import anyio
import pytest
from codex_mcp.client import Client, McpError
from codex_mcp.client.stateless import settle
from codex_mcp.core.calls import CallOptions
from codex_mcp.core.jsonrpc import JsonObject
from codex_mcp.core.peer import JsonRpcPeer
from codex_mcp.core.request_meta import CLIENT_CAPABILITIES_KEY

from .codex_harness import CODEX, ToolCall, run_codex, stdio_server_toml
from .gateway_helpers import (
    CMD_MCP,
    PY,
    ROOT,
    Lines,
    gateway,
    gateway_env,
    launch_http,
    launch_http_gateway,
    status,
    stdio,
    stop,
    until,
    write_config,
)

MODERN = "2026-07-28"
EVERYTHING_RELAYED = {"sampling": {}, "elicitation": {}, "roots": {}}


#: The examples server as a child that predates 2026-07-28 (it answers server/discover with
#: -32601): spoken to with `initialize` by every front (a dual-revision child is spoken to in
#: each front's revision: test_gateway_revision.py).
LEGACY_ONLY = [PY, str(ROOT / "tests/gateway/servers/legacy_only.py")]


def _config(tmp_path: Path) -> Path:
    return write_config(
        tmp_path, {"ex": stdio(LEGACY_ONLY, client_capabilities=EVERYTHING_RELAYED)}
    )


@pytest.mark.slow  # a gateway, its child and the child's stateless lane: 3.1 s at a load of 4
async def test_a_legacy_childs_question_is_a_round_for_a_modern_front(tmp_path: Path) -> None:
    asked: list[JsonObject] = []

    def elicit(params: JsonObject, _ctx: Any) -> JsonObject:
        asked.append(params)
        return {"action": "accept", "content": {"username": "ada", "email": "a@b.c"}}

    def sample(params: JsonObject, _ctx: Any) -> JsonObject:
        text = params["messages"][0]["content"]["text"]
        return {"role": "assistant", "content": {"type": "text", "text": text.upper()},
                "model": "m", "stopReason": "endTurn"}  # fmt: skip

    client = gateway(_config(tmp_path), mode=MODERN, elicitation_handler=elicit,
                     sampling_handler=sample)  # fmt: skip
    async with client:
        assert client.session.stateless is not None  # the front speaks 2026-07-28
        elicited = await client.call_tool("ex__test_elicitation", {"message": "Who?"})
        assert "action=accept" in elicited.text and "ada" in elicited.text, elicited.text
        assert len(asked) == 1 and asked[0]["message"] == "Who?"
        sampled = await client.call_tool("ex__test_sampling", {"prompt": "hello"})
        assert sampled.text == "LLM response: HELLO", sampled.text


async def test_a_modern_front_without_the_capability_is_told_so(tmp_path: Path) -> None:
    async with gateway(_config(tmp_path), mode=MODERN) as client:  # declares no elicitation
        result = await client.call_tool("ex__test_elicitation", {"message": "Who?"}, retries=0)
    assert result.is_error and "elicitation" in result.text, result.text


# -- a child that speaks 2026-07-28 only -----------------------------------------------------
# Our examples server, refusing `initialize` (-32022) or without it (stateless): the gateway
# speaks 2026-07-28 to it, and sees its rounds and tasks through for a front of either era.
STATELESS_ONLY = [PY, str(ROOT / "tests/gateway/servers/stateless_only.py")]
NAME = {"action": "accept", "content": {"name": "ada"}}
CONFIRM = {"action": "accept", "content": {"confirm": True}}


def _modern_child(tmp_path: Path, how: str = "--refuse") -> Path:
    return write_config(tmp_path, {"mo": stdio(STATELESS_ONLY, how)})


def _answer(params: JsonObject, _ctx: Any) -> JsonObject:
    """Our client's elicitation handler: a name for a name, yes for a confirmation."""
    properties = params["requestedSchema"]["properties"]
    return CONFIRM if "confirm" in properties else NAME


async def _task_until(client: Client, task_id: str, status: str) -> JsonObject:
    async def reached() -> JsonObject | None:
        task = await client.get_task(task_id)
        return task if task["status"] == status else None

    found: JsonObject = await until(reached, timeout=30)
    return found


@pytest.mark.slow
@pytest.mark.parametrize("how", ["--refuse", "--stateless"])
async def test_a_stateless_only_child_behind_a_modern_front(tmp_path: Path, how: str) -> None:
    errlog = Lines()  # with DEBUG=1 the gateway's stderr has its children's
    client = gateway(
        _modern_child(tmp_path, how),
        mode=MODERN,
        elicitation_handler=_answer,
        errlog=errlog,
        env={"DEBUG": "1"},
    )
    async with client:
        greeted = await client.call_tool("mo__greet", {"name": "x"}, retries=0)
        assert greeted.text == "Hello, x!", greeted.text
        # A round: the child's question is the front's own input-required round.
        rounded = await client.call_tool("mo__test_input_required_result_elicitation", {})
        assert rounded.text == "Hello, ada!", rounded.text
        # A task with a question inside it, step by step through the gateway's task methods.
        created = await client.session.request(
            "tools/call", {"name": "mo__confirm_delete", "arguments": {"filename": "f.txt"}}
        )
        assert created["resultType"] == "task", created
        task_id = created["taskId"]
        waiting = await _task_until(client, task_id, "input_required")
        [(key, asked)] = waiting["inputRequests"].items()
        assert asked["method"] == "elicitation/create" and "f.txt" in asked["params"]["message"]
        await client.session.request(
            "tasks/update", {"taskId": task_id, "inputResponses": {key: CONFIRM}}
        )
        done = await _task_until(client, task_id, "completed")
        assert done["result"]["content"][0]["text"] == "f.txt: deleted", done
        for gone in ("tasks/result", "tasks/list"):  # 2025-11-25's; not in 2026-07-28
            with pytest.raises(McpError) as missing:
                await client.session.request(gone, {"taskId": task_id})
            assert missing.value.code == -32601, missing.value
        # A tool that may run either way runs as a task for a front that declared tasks.
        where = await client.session.request("tools/call", {"name": "mo__where", "arguments": {}})
        assert where["resultType"] == "task", where
        ran = await _task_until(client, where["taskId"], "completed")
        assert ran["result"]["content"][0]["text"] == "task"
        # Our client follows a task to its end by itself, too.
        followed = await client.call_tool("mo__slow_compute", {"seconds": 0.3, "label": "it"})
        assert followed.text == "computed it in 0.3 s", followed.text
        # Cancelled at the gateway, the task ends cancelled, and so does the child's.
        slow = await client.session.request("tools/call", {"name": "mo__long_job", "arguments": {}})
        await client.cancel_task(slow["taskId"])
        await _task_until(client, slow["taskId"], "cancelled")
        await errlog.wait_for(r"stateless_only: long_job cancelled")
        # A failed task keeps the child's error.
        failing = await client.session.request(
            "tools/call", {"name": "mo__protocol_error_job", "arguments": {}}
        )
        failed = await _task_until(client, failing["taskId"], "failed")
        assert "on purpose" in failed["error"]["message"], failed


async def test_a_stateless_only_child_behind_a_legacy_front(tmp_path: Path) -> None:
    asked: list[str] = []

    def answer(params: JsonObject, ctx: Any) -> JsonObject:
        asked.append(params["message"])
        return _answer(params, ctx)

    async with gateway(_modern_child(tmp_path), elicitation_handler=answer) as client:
        assert client.session.stateless is None  # the front speaks the legacy era
        rounded = await client.call_tool("mo__test_input_required_result_elicitation", {})
        assert rounded.text == "Hello, ada!", rounded.text
        # The child's task is followed within the call; its question is elicitation/create.
        deleted = await client.call_tool("mo__confirm_delete", {"filename": "f.txt"}, retries=0)
        assert deleted.text == "f.txt: deleted", deleted.text
        # A tool that may run either way runs as a plain call for a legacy front (no task
        # to poll between it and its result).
        assert (await client.call_tool("mo__where", {}, retries=0)).text == "call"
        # A task-only tool, asking before its task exists, then working on as one.
        tasked = await client.call_tool("mo__test_tool_with_task", {}, retries=0)
        assert tasked.text == "Hello, ada, from a task", tasked.text
        assert asked == ["What is your name?", "Delete f.txt?", "What is your name?"]


async def test_a_stateless_only_childs_logs_reach_a_legacy_front(tmp_path: Path) -> None:
    """A 2026-07-28-only child has no logging/setLevel: the legacy front's level goes in
    each request's envelope, so its log messages reach the front, and nothing on stderr
    says a setLevel failed (it was refused -32601, and the messages were lost)."""
    logs: list[JsonObject] = []
    errlog = Lines()
    client = gateway(_modern_child(tmp_path), logging_handler=logs.append, errlog=errlog)
    async with client:
        await client.set_logging_level("info")
        done = await client.call_tool("mo__test_tool_with_logging", {}, retries=0)
        assert done.text == "Tool with logging executed successfully", done.text
        await until(lambda: len(logs) >= 3, 10)
    assert [entry["data"] for entry in logs] == [
        "Tool execution started",
        "Tool processing data",
        "Tool execution completed",
    ], logs
    assert not [line for line in errlog.lines if "setLevel" in line], errlog.lines


async def test_an_idle_stop_of_a_stateless_only_child_says_nothing(tmp_path: Path) -> None:
    """The gateway's own listen on a 2026-07-28 child is pending when the child stops for
    idleness: that close is the gateway's, and no warning says requests failed."""
    config = write_config(tmp_path, {"mo": stdio(STATELESS_ONLY, idle_timeout_sec=0.5)})
    errlog = Lines()
    async with gateway(config, errlog=errlog) as client:
        assert (await client.call_tool("mo__where", {}, retries=0)).text == "call"
        await until(lambda: _idle(client), 30)
        assert (await client.call_tool("mo__where", {}, retries=0)).text == "call"
    said = [line for line in errlog.lines if "failed" in line or "WARNING" in line]
    assert not said, said


async def _idle(client: Client) -> bool:
    return bool((await status(client))["mo"]["state"] == "idle")


async def test_a_childs_task_is_its_callers_alone(tmp_path: Path) -> None:
    """Over HTTP with two credentials: the gateway's handle for a child's task is refused to
    the other one, for every task method, and the task goes on for its own caller."""
    tokens = tmp_path / "tokens"
    tokens.write_text("token-a\ntoken-b\n")
    process, url = launch_http_gateway(_modern_child(tmp_path), "--bearer-token-file", str(tokens))
    try:
        a = Client.http(url, mode=MODERN, headers={"Authorization": "Bearer token-a"},
                        elicitation_handler=_answer)  # fmt: skip
        b = Client.http(url, mode=MODERN, headers={"Authorization": "Bearer token-b"})
        async with a, b:
            created = await a.session.request(
                "tools/call", {"name": "mo__confirm_delete", "arguments": {"filename": "a.txt"}}
            )
            task_id = created["taskId"]
            waiting = await _task_until(a, task_id, "input_required")
            [key] = waiting["inputRequests"]
            for method, params in [
                ("tasks/get", {}),
                ("tasks/update", {"inputResponses": {key: CONFIRM}}),
                ("tasks/cancel", {}),
            ]:
                with pytest.raises(McpError) as refused:
                    await b.session.request(method, {"taskId": task_id, **params})
                assert refused.value.code == -32602, (method, refused.value)
                assert "unknown taskId" in refused.value.message
            still = await a.get_task(task_id)
            assert still["status"] == "input_required"  # B's update and cancel did nothing
            await a.session.request(
                "tasks/update", {"taskId": task_id, "inputResponses": {key: CONFIRM}}
            )
            done = await _task_until(a, task_id, "completed")
            assert done["result"]["content"][0]["text"] == "a.txt: deleted"
    finally:
        stop(process)


async def test_a_stateless_only_child_behind_the_official_sdk_client(tmp_path: Path) -> None:
    """The official SDK's client, which speaks the legacy era here (its `initialize`): the
    child's round and its task's question reach it as `elicitation/create`."""
    from mcp import ClientSession, types
    from mcp.client.stdio import StdioServerParameters, stdio_client

    asked: list[str] = []

    async def elicit(_context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        asked.append(params.message)
        content = {"confirm": True} if "Delete" in params.message else {"name": "sdk"}
        return types.ElicitResult(action="accept", content=content)

    server = StdioServerParameters(
        command=PY, args=[CMD_MCP], env=gateway_env(_modern_child(tmp_path))
    )
    async with (
        stdio_client(server) as (read, write),
        ClientSession(read, write, elicitation_callback=elicit) as session,
    ):
        with anyio.fail_after(30):
            await session.initialize()
            rounded = await session.call_tool("mo__test_input_required_result_elicitation", {})
            deleted = await session.call_tool("mo__confirm_delete", {"filename": "s.txt"})
            computed = await session.call_tool("mo__slow_compute", {"seconds": 0.2})
    assert rounded.content[0].text == "Hello, sdk!"  # type: ignore[union-attr]
    assert deleted.content[0].text == "s.txt: deleted"  # type: ignore[union-attr]
    assert computed.content[0].text == "computed nothing in 0.2 s"  # type: ignore[union-attr]
    assert asked == ["What is your name?", "Delete s.txt?"]


@pytest.mark.interop
@pytest.mark.skipif(not CODEX.exists(), reason="the Codex CLI is not installed (scripts/setup.sh)")
@pytest.mark.parametrize(
    ("tool", "arguments", "answer"),
    [
        # A task-only tool: it asks first (a round, Codex's elicitation/create, which `codex
        # exec` declines), then works on as a task the gateway follows within Codex's call.
        ("test_tool_with_task", {}, "Hello, None, from a task"),
        # The child's round is Codex's elicitation/create; `codex exec` declines it (no
        # content), which the tool reports as a name of None.
        ("test_input_required_result_elicitation", {}, "Hello, None!"),
        # A question inside the child's task: asked of Codex too, declined, nothing deleted.
        ("confirm_delete", {"filename": "c.txt"}, "c.txt: kept"),
    ],
)
async def test_codex_calls_a_stateless_only_child(
    tmp_path: Path, tool: str, arguments: JsonObject, answer: str
) -> None:
    config = _modern_child(tmp_path)
    toml = stdio_server_toml("codex-mcp", PY, [CMD_MCP])
    cache = f'XDG_CACHE_HOME = "{os.environ["XDG_CACHE_HOME"]}"'
    toml += f'required = true\nenv = {{ CODEX_MCP_WRAPPER_CONFIG = "{config}", {cache} }}\n'
    run = await run_codex(
        tmp_path / "home", toml, call=ToolCall("mcp__codex_mcp", f"mo__{tool}", arguments)
    )
    assert run.returncode == 0, run.output
    [output] = run.model.tool_outputs()
    assert output[-1] == {"type": "input_text", "text": answer}, run.output


# -- a legacy child, a 2026-07-28 front -------------------------------------------------------


async def test_a_legacy_childs_question_makes_a_task_for_a_front_with_tasks(
    tmp_path: Path,
) -> None:
    """The child asks mid-call: the call becomes the gateway's task, the question waits in
    its input_required, and the child's call goes on unbroken once tasks/update answers."""

    def not_asked(_params: JsonObject, _ctx: Any) -> JsonObject:
        raise AssertionError("the question is the task's, answered with tasks/update")

    async with gateway(_config(tmp_path), mode=MODERN, elicitation_handler=not_asked) as client:
        created = await client.session.request(
            "tools/call", {"name": "ex__test_elicitation", "arguments": {"message": "Who?"}}
        )
        assert created["resultType"] == "task", created
        task_id = created["taskId"]
        waiting = await _task_until(client, task_id, "input_required")
        [(key, asked)] = waiting["inputRequests"].items()
        assert asked["method"] == "elicitation/create" and asked["params"]["message"] == "Who?"
        answer = {"action": "accept", "content": {"username": "ada", "email": "a@b.c"}}
        await client.session.request(
            "tasks/update", {"taskId": task_id, "inputResponses": {key: answer}}
        )
        done = await _task_until(client, task_id, "completed")
        text = done["result"]["content"][0]["text"]
        assert "action=accept" in text and "ada" in text, done
        # Cancelled while it waits for its answer: the task ends cancelled.
        again = await client.session.request(
            "tools/call", {"name": "ex__test_elicitation", "arguments": {"message": "Again?"}}
        )
        await _task_until(client, again["taskId"], "input_required")
        await client.cancel_task(again["taskId"])
        await _task_until(client, again["taskId"], "cancelled")
        # A call that asks nothing is answered as it always was: no task.
        added = await client.session.request(
            "tools/call", {"name": "ex__add", "arguments": {"a": 1, "b": 2}}
        )
        assert added.get("resultType", "complete") == "complete", added


async def test_a_legacy_childs_question_is_a_round_for_a_front_without_tasks(
    tmp_path: Path,
) -> None:
    def elicit(_params: JsonObject, _ctx: Any) -> JsonObject:
        return {"action": "accept", "content": {"username": "bo", "email": "b@o.c"}}

    async with gateway(_config(tmp_path), mode=MODERN, elicitation_handler=elicit) as client:
        era = client.session.stateless
        assert era is not None
        no_tasks = {"elicitation": {}}  # this request declares no tasks extension
        options = era.stamp(CallOptions(meta={CLIENT_CAPABILITIES_KEY: no_tasks}), True)
        params: JsonObject = {"name": "ex__test_elicitation", "arguments": {"message": "Who?"}}
        first = await JsonRpcPeer.request(client.session, "tools/call", params, options)
        assert first["resultType"] == "input_required", first
        [asked] = first["inputRequests"].values()
        assert asked["method"] == "elicitation/create"
        result = await settle(client.session, "tools/call", params, options, first)
        assert "bo" in result["content"][0]["text"], result


@pytest.mark.parametrize("how", ["--refuse", "--stateless"])
@pytest.mark.slow
async def test_a_stateless_only_child_over_http(tmp_path: Path, how: str) -> None:
    """The same child over Streamable HTTP, for a front of either era."""
    child, url = launch_http(command=[*STATELESS_ONLY, how, "--http"])
    try:
        config = write_config(tmp_path, {"mo": {"url": url}})
        for mode in (MODERN, "legacy"):
            async with gateway(config, mode=mode, elicitation_handler=_answer) as client:
                rounded = await client.call_tool("mo__test_input_required_result_elicitation", {})
                assert rounded.text == "Hello, ada!", (mode, rounded.text)
                deleted = await client.call_tool("mo__confirm_delete", {"filename": "h.txt"})
                assert deleted.text == "h.txt: deleted", (mode, deleted.text)
                tasked = await client.call_tool("mo__test_tool_with_task", {}, retries=0)
                assert tasked.text == "Hello, ada, from a task", (mode, tasked.text)
    finally:
        stop(child)
