"""Hostile progress of 2025-11-25 tasks through the gateway (specs/gateway.md, "Relaying":
Tasks of 2025-11-25): a child's progress with tokens it was never given for a live task
(made up, of a wrong type, the front's own token, an ended task's), progress after its task
ended, and two sessions whose concurrent tasks run on one shared child, each hearing only
its own progress.

Real processes: the gateway as `codex-mcp` (stdio) or `codex-mcp-http`, its child
`servers/task_server.py` (raw JSON-RPC, whose `work` tool sends the progress the test asks
for), our client as the front."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from codex_mcp.client import Client
from codex_mcp.gateway.config.env import GatewayEnv
from codex_mcp.gateway.config.parse import parse_document
from codex_mcp.gateway.serve import build_core

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
PROGRESS = "notifications/progress"


def _config(tmp_path: Path) -> Path:
    return write_config(tmp_path, {"t": stdio(TASKS)})


class Heard:
    """The notifications/progress a front received."""

    def __init__(self) -> None:
        self.progress: list[dict[str, Any]] = []

    def __call__(self, method: str, params: dict[str, Any]) -> None:
        if method == PROGRESS:
            self.progress.append(params)


async def _create(client: Client, token: Any, **arguments: Any) -> str:
    created = await client.request(
        "tools/call",
        {
            "name": "t__work",
            "arguments": arguments,
            "task": {},
            "_meta": {"progressToken": token},
        },
    )
    return str(created["task"]["taskId"])


async def test_forged_tokens_and_an_ended_tasks_reach_nobody(tmp_path: Path) -> None:
    """The child sends progress with tokens that name no live task of ours: made up, of
    wrong types, the front's own token (never given to the child), an ended task's. None
    reaches the front; the task's own progress does, under the front's token."""
    heard = Heard()
    async with gateway(_config(tmp_path), protocol_version=V, on_notification=heard) as client:
        first = await _create(client, "first", seconds=0.05, progress=1, label="first")
        await client.request("tasks/result", {"taskId": first}, timeout=30)
        await until(lambda: len(heard.progress) == 1, 30)
        heard.progress.clear()
        forged = [999_999, "999999", "mine", [1], {"a": 1}, None, True, 1.5, "x" * 10_000]
        task_id = await _create(
            client, "mine", seconds=0.2, progress=2, label="mine", forge=forged, ended=True
        )
        await client.request("tasks/result", {"taskId": task_id}, timeout=30)
        # The answer came after every progress the child sent (stdio keeps the order).
        assert [(p["progressToken"], p["progress"], p["message"]) for p in heard.progress] == [
            ("mine", 1, "mine"),
            ("mine", 2, "mine"),
        ]


async def test_progress_after_the_task_ended_is_dropped(tmp_path: Path) -> None:
    heard = Heard()
    statuses: list[str] = []

    def hear(method: str, params: dict[str, Any]) -> None:
        heard(method, params)
        if method == "notifications/tasks/status":
            statuses.append(params["status"])

    async with gateway(_config(tmp_path), protocol_version=V, on_notification=hear) as client:
        task_id = await _create(client, 7, seconds=0.1, progress=3, label="p", after_end=True)
        # The child sends its progress after the end before it answers tasks/result.
        await client.request("tasks/result", {"taskId": task_id}, timeout=30)
        assert statuses[-1:] == ["completed"]
        assert [p["progress"] for p in heard.progress] == [1, 2, 3]
        assert {p["progressToken"] for p in heard.progress} == {7}


async def test_two_sessions_on_one_child_hear_only_their_own(tmp_path: Path) -> None:
    """Over HTTP, one shared child: two sessions' concurrent tasks, both fronts choosing the
    same progressToken. Each hears its own progress only, all of it."""
    process, url = launch_http_gateway(_config(tmp_path))
    try:
        heard_a, heard_b = Heard(), Heard()
        async with (
            Client.http(url, protocol_version=V, on_notification=heard_a) as a,
            Client.http(url, protocol_version=V, on_notification=heard_b) as b,
        ):
            task_a, task_b = await asyncio.gather(
                _create(a, "same", seconds=0.6, progress=5, label="A"),
                _create(b, "same", seconds=0.6, progress=5, label="B"),
            )
            await asyncio.gather(
                a.request("tasks/result", {"taskId": task_a}, timeout=30),
                b.request("tasks/result", {"taskId": task_b}, timeout=30),
            )
            await until(lambda: len(heard_a.progress) >= 5 and len(heard_b.progress) >= 5, 30)
            for heard, label in ((heard_a, "A"), (heard_b, "B")):
                assert [p["progress"] for p in heard.progress] == [1, 2, 3, 4, 5]
                assert {(p["progressToken"], p["message"]) for p in heard.progress} == {
                    ("same", label)
                }
    finally:
        stop(process)


async def test_a_session_that_closed_leaves_its_tasks_progress_unheard(tmp_path: Path) -> None:
    """A session closes with its task running: the child's later progress for it goes to
    nobody (the other session on the shared child hears none of it), and nothing is kept."""
    process, url = launch_http_gateway(_config(tmp_path))
    try:
        heard_b = Heard()
        async with Client.http(url, protocol_version=V, on_notification=heard_b) as b:
            async with Client.http(url, protocol_version=V) as a:
                await _create(a, "t", seconds=1.0, progress=20, label="A")
            task_b = await _create(b, "t", seconds=1.5, progress=3, label="B")
            await b.request("tasks/result", {"taskId": task_b}, timeout=30)
            await until(lambda: len(heard_b.progress) >= 3, 30)
            assert {p["message"] for p in heard_b.progress} == {"B"}
    finally:
        stop(process)


async def test_routes_do_not_outlive_their_tasks_over_rounds(tmp_path: Path) -> None:
    """In process (the gateway's core, its child the real task server), so what the gateway
    holds can be counted: rounds of tasks with progress ending every way (result, cancel,
    a session closed under them, a child that says so) leave no route behind."""
    config = parse_document({"mcpServers": {"t": stdio(TASKS)}}, "test")
    core = build_core(config, GatewayEnv(cache_dir=tmp_path))
    provider = core.provider  # the gateway (its policy is an extension of the core)
    await core.start()
    try:
        tasks = provider.front_tasks

        def routes() -> dict[Any, Any]:  # where the child's progress goes, by its token
            connection = provider.shared[0].connection
            return connection.inflight.progress if connection is not None else {}

        async with Client.memory(core, protocol_version=V) as client:
            for done in range(1, 4):
                read = await _create(client, 1, seconds=0.05, progress=2)
                cancelled = await _create(client, 2, seconds=30, progress=50)
                heard_end = await _create(client, 3, seconds=0.05, progress=1)
                assert len(routes()) == 3
                await client.request("tasks/result", {"taskId": read}, timeout=30)
                await client.request("tasks/cancel", {"taskId": cancelled}, timeout=30)
                await until(lambda t=heard_end: tasks.handles.by_id[t].ended, 30)  # its status
                assert routes() == {}
                async with Client.memory(core, protocol_version=V) as other:
                    await _create(other, 4, seconds=30, progress=50)
                    assert len(routes()) == 1
                await until(lambda: not routes(), 30)
                # The closed session's task is gone with it; ours are kept a while after their end.
                assert len(tasks.handles) == 3 * done
    finally:
        await core.aclose()
