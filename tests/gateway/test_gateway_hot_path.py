"""The relay's hot path (a stdio child that is up, no per-call timeout: relay.RelayedCall and
ChildSession.receive) answers each front call under the front's own id, whatever its type,
with the child's result repaired where a repair applies, its errors normalized, and answers
the gateway never asked for dropped. A real gateway subprocess over real pipes, spoken to in
raw JSON-RPC so the ids are the test's own, with the broken server as the child."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import orjson
import pytest

from .gateway_helpers import BROKEN, CMD_MCP, PY, gateway_env, stdio, write_config
from .servers.broken_server import STRAY_ID

TOOLS = "echo,snake_case,tool_error,fail,stray_answers"


class RawFront:
    """The gateway's client, one JSON line at a time: answers are kept by id."""

    def __init__(self, process: asyncio.subprocess.Process) -> None:
        self.process = process
        self.answers: dict[Any, dict[str, Any]] = {}
        self.unexpected: list[dict[str, Any]] = []

    def send(self, message: dict[str, Any]) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(orjson.dumps({"jsonrpc": "2.0", **message}) + b"\n")

    def call(self, request_id: Any, tool: str, arguments: dict[str, Any] | None = None) -> None:
        params = {"name": f"brk__{tool}", "arguments": arguments or {}}
        self.send({"id": request_id, "method": "tools/call", "params": params})

    async def answer(self, request_id: Any) -> dict[str, Any]:
        """The answer to `request_id` (other answers that come first are kept)."""
        assert self.process.stdout is not None
        async with asyncio.timeout(30):
            while request_id not in self.answers:
                line = await self.process.stdout.readline()
                assert line, "the gateway closed its stdout"
                message = orjson.loads(line)
                if "id" in message and "method" not in message:
                    if message["id"] in self.answers:
                        self.unexpected.append(message)  # a second answer to one id
                    self.answers[message["id"]] = message
        return self.answers[request_id]


@pytest.fixture
async def front(tmp_path: Path) -> AsyncIterator[RawFront]:
    config = write_config(tmp_path, {"brk": stdio(BROKEN, "--tools", TOOLS)})
    process = await asyncio.create_subprocess_exec(
        PY,
        CMD_MCP,
        env=gateway_env(config),
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.DEVNULL,
    )
    raw = RawFront(process)
    raw.send(
        {
            "id": "init",
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "raw", "version": "1"},
            },
        }
    )
    assert "result" in await raw.answer("init")
    raw.send({"method": "notifications/initialized"})
    raw.send({"id": "list", "method": "tools/list"})
    assert "brk__echo" in {t["name"] for t in (await raw.answer("list"))["result"]["tools"]}
    yield raw
    assert process.stdin is not None
    process.stdin.close()
    try:
        await asyncio.wait_for(process.wait(), 10)
    except TimeoutError:
        process.kill()
        await process.wait()


def text_of(answer: dict[str, Any]) -> str:
    return str(answer["result"]["content"][0]["text"])


async def test_each_call_is_answered_under_its_own_id(front: RawFront) -> None:
    """String and number ids, ids our own numbering could mint, a numeric string, all in
    flight at once: each answer carries its call's id and its call's result."""
    ids: list[Any] = ["abc", 7, 0, -3, 2**62, "7", "", 1]
    for request_id in ids:
        front.call(request_id, "echo", {"message": f"for {request_id!r}"})
    for request_id in ids:
        answer = await front.answer(request_id)
        assert text_of(answer) == f"for {request_id!r}", answer
    assert front.unexpected == []


async def test_a_result_that_needs_a_repair_is_repaired(front: RawFront) -> None:
    """seed 000's snake case (`is_error`, `structured_content`) comes back in camel case."""
    front.call(1, "snake_case")
    front.call(2, "tool_error")
    repaired = (await front.answer(1))["result"]
    assert repaired["structuredContent"] == {"snake": True} and repaired["isError"] is False
    assert "structured_content" not in repaired and "is_error" not in repaired
    failed = (await front.answer(2))["result"]
    assert failed["isError"] is True and text_of({"result": failed}) != ""


async def test_a_child_error_is_normalized(front: RawFront) -> None:
    front.call("e", "fail", {"code": -32000, "message": "database locked"})
    error = (await front.answer("e"))["error"]
    assert error["code"] == -32000 and error["message"].startswith("Server error: database locked")
    assert error["data"]["retryable"] is True and error["data"]["toolName"] == "fail"


async def test_an_answer_to_an_id_never_used_goes_nowhere(front: RawFront) -> None:
    """The child answers an id the gateway never sent (dropped), then its call with the id
    written as a string (still its call's answer); the gateway serves on."""
    front.call(5, "stray_answers")
    assert text_of(await front.answer(5)) == "mine"
    front.call(6, "echo", {"message": "still here"})
    assert text_of(await front.answer(6)) == "still here"
    assert STRAY_ID not in front.answers and front.unexpected == []
