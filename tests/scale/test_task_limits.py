"""2026-07-28 tasks are bounded: per caller and in all (finished tasks make room, running
ones do not), a task waiting for input fails after --task-input-timeout, running tasks
count as calls in flight (against --max-inflight, and for the drain on SIGTERM)."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from http_process import HttpProcess
from scale_setup import SHARED, Replicas
from test_stateless_replicas import headers, request

ALPHA = {"Authorization": "Bearer alpha-token-0123456789"}
BETA = {"Authorization": "Bearer beta-token-0123456789"}


async def send(
    http: aiohttp.ClientSession, url: str, body: dict[str, Any], auth: dict[str, str] | None = None
) -> tuple[int, dict[str, Any]]:
    params = body["params"]
    name = params.get("name") or params.get("taskId")
    head = {**headers(body["method"], name), **(auth or {})}
    async with http.post(url, json=body, headers=head) as response:
        return response.status, await response.json()


def job(request_id: int, seconds: float) -> dict[str, Any]:
    return request(request_id, "tools/call", name="job", arguments={"seconds": seconds})


async def until_status(
    http: aiohttp.ClientSession,
    url: str,
    task_id: str,
    status: str,
    auth: dict[str, str] | None = None,
    seconds: float = 30,
) -> dict[str, Any]:
    deadline = time.monotonic() + seconds
    while True:
        _, reply = await send(http, url, request(999, "tasks/get", taskId=task_id), auth)
        task = reply["result"]
        if task["status"] == status:
            return task
        assert time.monotonic() < deadline, f"task {task_id} never {status}: {task}"
        await asyncio.sleep(0.05)


@pytest.mark.slow
async def test_tasks_are_capped_per_caller_and_in_all(tmp_path: Path) -> None:
    tokens = tmp_path / "tokens"
    tokens.write_text("alpha-token-0123456789\nbeta-token-0123456789\n")
    server = HttpProcess(
        "--serve",
        SHARED,
        "--bearer-token-file",
        str(tokens),
        "--max-tasks-per-principal",
        "2",
        "--max-tasks",
        "3",
    )
    try:
        async with aiohttp.ClientSession() as http:
            made = [(await send(http, server.url, job(i, 60), ALPHA))[1] for i in (1, 2)]
            first, second = (reply["result"] for reply in made)
            assert first["resultType"] == second["resultType"] == "task"
            _, third = await send(http, server.url, job(3, 60), ALPHA)
            assert third["error"]["data"]["reason"] == "too_many_tasks", third
            assert "this caller already has 2 running" in third["error"]["message"]

            _, theirs = await send(http, server.url, job(4, 60), BETA)
            assert theirs["result"]["resultType"] == "task"  # another caller's share
            _, full = await send(http, server.url, job(5, 60), BETA)
            assert full["error"]["data"] == {"reason": "too_many_tasks", "limit": 3}, full

            cancel = request(6, "tasks/cancel", taskId=first["taskId"])
            assert "result" in (await send(http, server.url, cancel, ALPHA))[1]
            await until_status(http, server.url, first["taskId"], "cancelled", ALPHA)
            _, room = await send(http, server.url, job(7, 60), BETA)  # a finished task made room
            assert room["result"]["resultType"] == "task", room
            whoami = request(8, "tools/call", name="whoami")  # a call that is not a task
            _, answered = await send(http, server.url, whoami, ALPHA)
            assert answered["result"]["content"][0]["text"] == str(server.pid)
    finally:
        server.stop()


@pytest.mark.slow
async def test_running_tasks_count_as_calls_in_flight() -> None:
    server = HttpProcess("--serve", SHARED, "--max-inflight", "2")
    try:
        async with aiohttp.ClientSession() as http:
            tasks = [(await send(http, server.url, job(i, 60)))[1]["result"] for i in (1, 2)]
            assert all(task["resultType"] == "task" for task in tasks)
            echo = request(3, "tools/call", name="echo", arguments={"message": "hi"})
            status, busy = await send(http, server.url, echo)
            assert status == 503, busy
            assert "Too many calls in flight" in busy["error"]["message"]
            # Following and cancelling a task is never refused: that is how room is made.
            cancel = request(4, "tasks/cancel", taskId=tasks[0]["taskId"])
            assert (await send(http, server.url, cancel))[0] == 200
            await until_status(http, server.url, tasks[0]["taskId"], "cancelled")
            status, echoed = await send(http, server.url, {**echo, "id": 5})
            assert status == 200 and echoed["result"]["content"][0]["text"] == "hi"
    finally:
        server.stop()


async def test_a_task_waiting_for_input_fails_after_the_timeout() -> None:
    server = HttpProcess("--serve", SHARED, "--task-input-timeout", "0.5")
    try:
        async with aiohttp.ClientSession() as http:
            asking = request(1, "tools/call", name="confirm_job", arguments={})
            task = (await send(http, server.url, asking))[1]["result"]
            failed = await until_status(http, server.url, task["taskId"], "failed")
            assert "No answer to the task's input request within 0.5 s" in failed["statusMessage"]
            assert failed["error"]["data"] == {"reason": "input_timeout"}
    finally:
        server.stop()


@pytest.mark.slow
async def test_sigterm_drains_running_tasks_then_cancels_the_rest(replicas: Replicas) -> None:
    a, b = replicas(2, "--shutdown-timeout", "4")
    async with aiohttp.ClientSession() as http:
        short = (await send(http, a.url, job(1, 1)))[1]["result"]
        long = (await send(http, a.url, job(2, 120)))[1]["result"]
        a.process.terminate()
        done = await until_status(http, b.url, short["taskId"], "completed")
        assert done["result"]["content"][0]["text"] == f"job done in {a.pid}"
        await until_status(http, b.url, long["taskId"], "cancelled")
    assert a.process.wait(30) == 0
