"""server-everything's `simulate-research-query` (execution.taskSupport "required", a
2025-11-25 task) through the gateway, over stdio and HTTP (specs/gateway.md, "Relaying":
Tasks of 2025-11-25): a 2025-11-25 front makes the task, polls it, gets its result, and
answers its question (input_required) through it; a front that does not make tasks (the
official SDK client, a 2026-07-28 front) calls it plainly and gets the report, the gateway
following the task; the `tasks` capability is declared only with such a child."""

from __future__ import annotations

import asyncio
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest
from codex_mcp.client import Client
from mcp import ClientSession, types
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client

from .gateway_helpers import (
    CMD_MCP,
    EVERYTHING,
    MISSING_NPM,
    gateway,
    gateway_env,
    launch_http_gateway,
    stdio,
    stop,
    write_config,
)

pytestmark = [
    pytest.mark.interop,
    pytest.mark.skipif(not EVERYTHING.exists(), reason=MISSING_NPM),
]
V = "2025-11-25"
TOOL = "everything__simulate_research_query"
TERMINAL = ("completed", "failed", "cancelled")


def _config(tmp_path: Path) -> Path:
    return write_config(tmp_path, {"everything": stdio(EVERYTHING)})


@asynccontextmanager
async def _front(transport: str, config: Path, **options: Any) -> AsyncIterator[Client]:
    """Our client, as a 2025-11-25 front, on the gateway over `transport`."""
    if transport == "stdio":
        async with gateway(config, protocol_version=V, **options) as client:
            yield client
        return
    process, url = launch_http_gateway(config)
    try:
        async with Client.http(url, protocol_version=V, timeout=30, **options) as client:
            yield client
    finally:
        stop(process)


async def _poll(client: Client, task_id: str) -> dict[str, Any]:
    """tasks/get at the task's pollInterval until it ends (bounded)."""
    async with asyncio.timeout(60):
        while True:
            task = await client.request("tasks/get", {"taskId": task_id})
            assert task["taskId"] == task_id
            if task["status"] in TERMINAL:
                return task
            await asyncio.sleep(min(task.get("pollInterval", 200), 1000) / 1000)


@pytest.mark.parametrize("transport", ["stdio", "http"])
async def test_a_research_task_made_polled_and_read(tmp_path: Path, transport: str) -> None:
    async with _front(transport, _config(tmp_path)) as client:
        tasks = client.server_capabilities["tasks"]
        assert tasks["requests"] == {"tools": {"call": {}}} and "list" in tasks
        listed = {tool.name: tool.raw for tool in await client.list_tools()}
        assert listed[TOOL]["execution"] == {"taskSupport": "required"}
        created = await client.request(
            "tools/call",
            {"name": TOOL, "arguments": {"topic": "gateways"}, "task": {"ttl": 120_000}},
        )
        task = created["task"]
        assert task["status"] == "working" and task["ttl"] > 0
        task_id = task["taskId"]
        assert [t["taskId"] for t in (await client.request("tasks/list", {}))["tasks"]] == [task_id]
        assert (await _poll(client, task_id))["status"] == "completed"
        result = await client.request("tasks/result", {"taskId": task_id}, timeout=30)
        assert "# Research Report: gateways" in result["content"][0]["text"]
        assert result["_meta"]["io.modelcontextprotocol/related-task"] == {"taskId": task_id}


async def test_its_question_is_asked_through_the_task(tmp_path: Path) -> None:
    """`ambiguous`: the child asks which interpretation (input_required), delivering its
    elicitation on the front's tasks/result; the gateway ties it to that request."""
    asked: list[dict[str, Any]] = []

    def answer(params: dict[str, Any], _ctx: Any) -> dict[str, Any]:
        asked.append(params)
        return {"action": "accept", "content": {"interpretation": "historical"}}

    async with _front("stdio", _config(tmp_path), elicitation_handler=answer) as client:
        created = await client.request(
            "tools/call",
            {"name": TOOL, "arguments": {"topic": "rivers", "ambiguous": True}, "task": {}},
        )
        task_id = created["task"]["taskId"]
        result = await client.request("tasks/result", {"taskId": task_id}, timeout=60)
        assert "rivers (historical)" in result["content"][0]["text"], result
        assert len(asked) == 1
        assert asked[0]["_meta"]["io.modelcontextprotocol/related-task"] == {"taskId": task_id}


async def test_a_cancelled_research_task(tmp_path: Path) -> None:
    async with _front("stdio", _config(tmp_path)) as client:
        created = await client.request(
            "tools/call", {"name": TOOL, "arguments": {"topic": "x"}, "task": {}}
        )
        task_id = created["task"]["taskId"]
        cancelled = await client.request("tasks/cancel", {"taskId": task_id})
        assert cancelled["status"] == "cancelled" and cancelled["taskId"] == task_id
        assert (await client.request("tasks/get", {"taskId": task_id}))["status"] == "cancelled"


@asynccontextmanager
async def _sdk(transport: str, config: Path) -> AsyncIterator[ClientSession]:
    """The official SDK's client on the gateway over `transport`."""
    if transport == "stdio":
        params = StdioServerParameters(
            command=sys.executable, args=[CMD_MCP], env=gateway_env(config)
        )
        async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
            with anyio.fail_after(30):
                await session.initialize()
            yield session
        return
    process, url = launch_http_gateway(config)
    try:
        async with (
            streamable_http_client(url) as streams,
            ClientSession(streams[0], streams[1]) as session,
        ):
            with anyio.fail_after(30):
                await session.initialize()
            yield session
    finally:
        stop(process)


@pytest.mark.parametrize("transport", ["stdio", "http"])
async def test_the_sdk_client_calls_it_plainly(tmp_path: Path, transport: str) -> None:
    """The official SDK client makes no 2025-11-25 tasks: its plain call is answered with
    the report, the gateway following the child's task (it failed with "requires task
    augmentation" before)."""
    async with _sdk(transport, _config(tmp_path)) as session:
        with anyio.fail_after(60):
            result = await session.call_tool(TOOL, {"topic": "plain calls"})
        assert not result.is_error, result
        text = result.content[0]
        assert isinstance(text, types.TextContent)
        assert "# Research Report: plain calls" in text.text


async def test_a_2026_front_calls_it_plainly(tmp_path: Path) -> None:
    async with gateway(_config(tmp_path), mode="2026-07-28") as client:
        assert client.session.stateless is not None
        result = await client.call_tool(TOOL, {"topic": "eras"}, timeout=60)
        assert "# Research Report: eras" in result.text, result.text


@pytest.mark.parametrize("transport", ["stdio", "http"])
async def test_a_per_session_child_offers_its_tasks_as_a_shared_one_does(
    tmp_path: Path, transport: str
) -> None:
    """A per-session child is not up when its front initializes, and its tasks were never
    seen: `tasks` is still declared to a 2025-11-25 front (its entry may offer them), a
    task-augmented call makes one, and a plain call is answered by following the task
    (both failed with "requires task augmentation" before, over stdio and HTTP)."""
    config = write_config(tmp_path, {"everything": stdio(EVERYTHING, per_session=True)})
    async with _front(transport, config) as client:
        assert client.server_capabilities["tasks"]["requests"] == {"tools": {"call": {}}}
        created = await client.request(
            "tools/call", {"name": TOOL, "arguments": {"topic": "mine"}, "task": {}}
        )
        task_id = created["task"]["taskId"]
        result = await client.request("tasks/result", {"taskId": task_id}, timeout=60)
        assert "# Research Report: mine" in result["content"][0]["text"], result
        plain = await client.call_tool(TOOL, {"topic": "plainly"}, timeout=60, retries=0)
        assert "# Research Report: plainly" in plain.text, plain.text
