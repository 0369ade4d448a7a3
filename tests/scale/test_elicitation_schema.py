"""What a client answers to an elicitation reaches the tool only if it matches the
requestedSchema the tool asked with: a legacy session's answer, a 2026-07-28 round's
inputResponses and a task's tasks/update alike. Otherwise the tool gets a clear error
(and, not catching it, fails with that message), never the unchecked data."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import aiohttp
import pytest
from codex_mcp.client import Client
from http_process import HttpProcess
from scale_setup import SHARED
from test_stateless_replicas import post, request, task_until

MISMATCH = "The client's answer does not match the requested schema"


@pytest.fixture
def server() -> Iterator[HttpProcess]:
    process = HttpProcess("--serve", SHARED)
    yield process
    process.stop()


async def test_a_legacy_answer_is_checked(server: HttpProcess) -> None:
    async def wrong(params: Any) -> Any:
        return {"action": "accept", "content": {"nom": "Rhea"}}  # not the asked property

    async with Client.http(server.url, elicitation_handler=wrong) as client:
        result = await client.call_tool("ask")
    assert result.is_error
    assert MISMATCH in result.text and "'name' is a required property" in result.text

    async def right(params: Any) -> Any:
        return {"action": "accept", "content": {"name": "Rhea"}}

    async with Client.http(server.url, elicitation_handler=right) as client:
        assert (await client.call_tool("ask")).text == f"hello Rhea from {server.pid}"


async def test_a_modern_round_answer_is_checked(server: HttpProcess) -> None:
    async with aiohttp.ClientSession() as http:
        first = await post(http, server.url, request(1, "tools/call", name="ask", arguments={}))
        (key,) = first["result"]["inputRequests"]
        retry = request(
            2,
            "tools/call",
            name="ask",
            arguments={},
            inputResponses={key: {"action": "accept", "content": {"name": 5}}},
            requestState=first["result"]["requestState"],
        )
        answered = (await post(http, server.url, retry))["result"]
    assert answered["isError"] is True
    text = answered["content"][0]["text"]
    assert MISMATCH in text and "name: 5 is not of type 'string'" in text


async def test_a_task_answer_is_checked(server: HttpProcess) -> None:
    async with aiohttp.ClientSession() as http:
        asking = request(1, "tools/call", name="confirm_job", arguments={})
        task = (await post(http, server.url, asking))["result"]
        await task_until(http, [server.url], task["taskId"], "input_required")
        update = request(
            2,
            "tasks/update",
            taskId=task["taskId"],
            inputResponses={"go": {"action": "accept", "content": {"ok": "yes, surely"}}},
        )
        assert "result" in await post(http, server.url, update)
        done = await task_until(http, [server.url], task["taskId"], "completed")
    assert done["result"]["isError"] is True
    assert "ok: 'yes, surely' is not of type 'boolean'" in done["result"]["content"][0]["text"]
