"""Progress of a 2025-11-25 task through the gateway (specs/gateway.md, "Relaying": Tasks of
2025-11-25): the child keeps sending notifications/progress with the token of the call that
made the task until the task ends; the front that made it hears all of it under its own
progressToken, over stdio and HTTP. A front that makes no tasks calling a task-required
tool plainly hears the progress of the task the gateway follows for it, as for any call.

server-everything's `simulate-research-query` sends no progress (its stages are status
messages only), so the child is `servers/task_server.py`, whose `work` sends what it is
asked to."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
from codex_mcp.client import Client

from .gateway_helpers import (
    PY,
    SERVERS,
    gateway,
    launch_http_gateway,
    stdio,
    stop,
    until,
    write_config,
)

TASKS = [PY, str(SERVERS / "task_server.py")]
V = "2025-11-25"


@asynccontextmanager
async def _front(transport: str, tmp_path: Path, **options: Any) -> AsyncIterator[Client]:
    config = write_config(tmp_path, {"t": stdio(TASKS)})
    if transport == "stdio":
        async with gateway(config, **options) as client:
            yield client
        return
    process, url = launch_http_gateway(config)
    try:
        async with Client.http(url, timeout=30, **options) as client:
            yield client
    finally:
        stop(process)


@pytest.mark.parametrize("transport", ["stdio", "http"])
async def test_a_tasks_progress_reaches_its_front(tmp_path: Path, transport: str) -> None:
    heard: list[dict[str, Any]] = []

    def hear(method: str, params: dict[str, Any]) -> None:
        if method == "notifications/progress":
            heard.append(params)

    async with _front(transport, tmp_path, protocol_version=V, on_notification=hear) as client:
        created = await client.request(
            "tools/call",
            {
                "name": "t__work",
                "arguments": {"seconds": 0.8, "progress": 4, "label": "step"},
                "task": {},
                "_meta": {"progressToken": "front-token"},
            },
        )
        task_id = created["task"]["taskId"]
        result = await client.request("tasks/result", {"taskId": task_id}, timeout=30)
        assert result["content"][0]["text"] == "done: work"
        await until(lambda: len(heard) >= 4, 30)
        assert [(p["progressToken"], p["progress"], p["message"]) for p in heard] == [
            ("front-token", n, "step") for n in (1, 2, 3, 4)
        ]


@pytest.mark.parametrize("transport", ["stdio", "http"])
async def test_a_followed_tasks_progress_reaches_the_plain_call(
    tmp_path: Path, transport: str
) -> None:
    """A 2025-06-18 front makes no tasks: its plain call of `work` (task required) is
    followed by the gateway, and the task's progress reaches the call's progressToken."""
    heard: list[dict[str, Any]] = []
    async with _front(transport, tmp_path, protocol_version="2025-06-18") as client:
        assert "tasks" not in client.server_capabilities
        result = await client.call_tool(
            "t__work",
            {"seconds": 0.8, "progress": 3, "label": "plain"},
            on_progress=heard.append,
            timeout=30,
        )
        assert result.text == "done: work"
        await until(lambda: len(heard) >= 3, 30)
        assert [(p["progress"], p["message"]) for p in heard] == [
            (1, "plain"),
            (2, "plain"),
            (3, "plain"),
        ]
