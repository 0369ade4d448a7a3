"""Both protocol eras through the gateway. Its children are spoken to in the era they were
started in (legacy `initialize`): a 2026-07-28 front request's envelope is not passed on, so a
dual-era child answers as a legacy server, and its questions to the client are the gateway's
to translate. For a 2026-07-28 front, a child's `elicitation/create` (or sampling, roots)
becomes an input-required round: the call is answered `input_required`, and its retry runs
the child's call again, whose question then finds its answer. Real gateway, real children."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import pytest
from codex_mcp.client import Client, McpError
from codex_mcp.core.jsonrpc import JsonObject

from .gateway_helpers import (
    CMD_MCP,
    EXAMPLES,
    PY,
    ROOT,
    gateway,
    gateway_env,
    launch_http_gateway,
    stdio,
    stop,
    until,
    write_config,
)

MODERN = "2026-07-28"
EVERYTHING_RELAYED = {"sampling": {}, "elicitation": {}, "roots": {}}


def _config(tmp_path: Path) -> Path:
    return write_config(tmp_path, {"ex": stdio(EXAMPLES, client_capabilities=EVERYTHING_RELAYED)})


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
        assert client.session.modern is not None  # the front speaks 2026-07-28
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
MODERN_ONLY = [PY, str(ROOT / "tests/gateway/servers/modern_only.py")]
NAME = {"action": "accept", "content": {"name": "ada"}}
CONFIRM = {"action": "accept", "content": {"confirm": True}}


def _modern_child(tmp_path: Path, how: str = "--refuse") -> Path:
    return write_config(tmp_path, {"mo": stdio(MODERN_ONLY, how)})


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


@pytest.mark.parametrize("how", ["--refuse", "--stateless"])
async def test_a_modern_only_child_behind_a_modern_front(tmp_path: Path, how: str) -> None:
    client = gateway(_modern_child(tmp_path, how), mode=MODERN, elicitation_handler=_answer)
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
        # Our client follows a task to its end by itself, too.
        followed = await client.call_tool("mo__slow_compute", {"seconds": 0.3, "label": "it"})
        assert followed.text == "computed it in 0.3 s", followed.text
        # Cancelled at the gateway, the task ends cancelled.
        slow = await client.session.request(
            "tools/call", {"name": "mo__slow_compute", "arguments": {"seconds": 60}}
        )
        await client.cancel_task(slow["taskId"])
        await _task_until(client, slow["taskId"], "cancelled")
        # A failed task keeps the child's error.
        failing = await client.session.request(
            "tools/call", {"name": "mo__protocol_error_job", "arguments": {}}
        )
        failed = await _task_until(client, failing["taskId"], "failed")
        assert "on purpose" in failed["error"]["message"], failed


async def test_a_modern_only_child_behind_a_legacy_front(tmp_path: Path) -> None:
    asked: list[str] = []

    def answer(params: JsonObject, ctx: Any) -> JsonObject:
        asked.append(params["message"])
        return _answer(params, ctx)

    async with gateway(_modern_child(tmp_path), elicitation_handler=answer) as client:
        assert client.session.modern is None  # the front speaks the legacy era
        rounded = await client.call_tool("mo__test_input_required_result_elicitation", {})
        assert rounded.text == "Hello, ada!", rounded.text
        # The child's task is followed within the call; its question is elicitation/create.
        deleted = await client.call_tool("mo__confirm_delete", {"filename": "f.txt"}, retries=0)
        assert deleted.text == "f.txt: deleted", deleted.text
        # A task-only tool, asking before its task exists, then working on as one.
        tasked = await client.call_tool("mo__test_tool_with_task", {}, retries=0)
        assert tasked.text == "Hello, ada, from a task", tasked.text
        assert asked == ["What is your name?", "Delete f.txt?", "What is your name?"]


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


async def test_a_modern_only_child_behind_the_official_sdk_client(tmp_path: Path) -> None:
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
