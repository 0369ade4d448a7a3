"""2026-07-28 clients served by replicas sharing Redis interchangeably: tasks made on one
replica are polled, answered and cancelled on the others; a requestState is accepted
once across all of them; listen streams hear what any replica does."""

from __future__ import annotations

import asyncio
import json
import re
from typing import Any

import aiohttp
import pytest
from scale_setup import RedisServer, Replicas, Trio
from support.polling import until_sync

VERSION = "io.modelcontextprotocol/protocolVersion"
TASKS = "io.modelcontextprotocol/tasks"
META = {
    VERSION: "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {"elicitation": {}, "extensions": {TASKS: {}}},
    "io.modelcontextprotocol/clientInfo": {"name": "scale-tests", "version": "1"},
}


def request(request_id: int, method: str, **fields: Any) -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "id": request_id,
        "method": method,
        "params": {**fields, "_meta": META},
    }


def headers(method: str, name: str | None = None) -> dict[str, str]:
    out = {
        "Accept": "application/json, text/event-stream",
        "MCP-Protocol-Version": "2026-07-28",
        "Mcp-Method": method,
    }
    if name is not None:
        out["Mcp-Name"] = name
    return out


async def post(http: aiohttp.ClientSession, url: str, body: dict[str, Any]) -> dict[str, Any]:
    params = body["params"]
    name = params.get("name") or params.get("taskId") or params.get("uri")
    async with http.post(url, json=body, headers=headers(body["method"], name)) as response:
        reply: dict[str, Any] = await response.json()
        return reply


async def task_until(
    http: aiohttp.ClientSession, urls: list[str], task_id: str, status: str
) -> dict[str, Any]:
    """Poll tasks/get round the replicas until the task reaches `status`."""
    for attempt in range(300):
        url = urls[attempt % len(urls)]
        task = (await post(http, url, request(1000 + attempt, "tasks/get", taskId=task_id)))[
            "result"
        ]
        if task["status"] == status:
            return task
        await asyncio.sleep(0.05)
    raise AssertionError(f"task {task_id} never reached {status}: {task}")


@pytest.mark.slow
async def test_a_task_is_followed_answered_and_cancelled_on_other_replicas(
    replicas: Replicas,
) -> None:
    a, b, c = replicas(3)
    async with aiohttp.ClientSession() as http:
        made = (
            await post(
                http, a.url, request(1, "tools/call", name="job", arguments={"seconds": 0.5})
            )
        )["result"]
        assert made["resultType"] == "task"
        working = (await post(http, b.url, request(2, "tasks/get", taskId=made["taskId"])))[
            "result"
        ]
        assert working["status"] == "working"  # known at once on another replica
        done = await task_until(http, [c.url, b.url], made["taskId"], "completed")
        assert done["result"]["content"][0]["text"] == f"job done in {a.pid}"

        asking = (
            await post(http, a.url, request(3, "tools/call", name="confirm_job", arguments={}))
        )["result"]
        waiting = await task_until(http, [b.url], asking["taskId"], "input_required")
        assert list(waiting["inputRequests"]) == ["go"]
        bad = await post(
            http,
            c.url,
            request(
                4,
                "tasks/update",
                taskId=asking["taskId"],
                inputResponses={"go": {"action": "maybe"}},
            ),
        )
        assert bad["error"]["code"] == -32602  # checked where it arrives
        good = {"go": {"action": "accept", "content": {"ok": True}}}
        assert "result" in await post(
            http, c.url, request(5, "tasks/update", taskId=asking["taskId"], inputResponses=good)
        )
        answered = await task_until(http, [b.url, c.url], asking["taskId"], "completed")
        assert answered["result"]["content"][0]["text"] == f"confirmed True in {a.pid}"

        long = (
            await post(http, a.url, request(6, "tools/call", name="job", arguments={"seconds": 30}))
        )["result"]
        assert "result" in await post(
            http, b.url, request(7, "tasks/cancel", taskId=long["taskId"])
        )
        await task_until(http, [c.url], long["taskId"], "cancelled")
        unknown = await post(http, b.url, request(8, "tasks/get", taskId="no-such-task"))
        assert unknown["error"]["code"] == -32602


def uptime(server: RedisServer) -> int:
    """The seconds since the youngest Redis process of `server` (a Cluster's: each node's)."""
    nodes = getattr(server, "nodes", [server])
    said = (re.search(r"uptime_in_seconds:(\d+)", n.cli("info", "server")) for n in nodes)
    return min(int(found.group(1)) if found else 0 for found in said)


@pytest.mark.slow
async def test_a_request_state_is_accepted_once_across_replicas(
    replicas: Replicas, redis_server: RedisServer
) -> None:
    a, b, c = replicas(3, "--request-state-keys", "the-keys-every-replica-shares-0123456789")
    # A state issued in a Redis process's first seconds is refused as issued before it (its
    # epoch begins a second after it started, less the clock skew allowed: specs/scale.md,
    # "The requestState epoch"); three replicas can start sooner than that.
    until_sync(lambda: uptime(redis_server) >= 4, 10, "Redis up for 4 s")
    async with aiohttp.ClientSession() as http:
        first = (await post(http, a.url, request(1, "tools/call", name="ask", arguments={})))[
            "result"
        ]
        assert first["resultType"] == "input_required"
        (key,) = first["inputRequests"]
        answers = {key: {"action": "accept", "content": {"name": "Rhea"}}}
        retry = request(
            2,
            "tools/call",
            name="ask",
            arguments={},
            inputResponses=answers,
            requestState=first["requestState"],
        )
        done = (await post(http, b.url, retry))["result"]
        assert done["content"][0]["text"] == f"hello Rhea from {b.pid}"
        replayed = await post(http, c.url, {**retry, "id": 3})
        assert replayed["error"]["data"] == {"reason": "replayed"}


async def test_a_listen_stream_hears_what_another_replica_does(trio: Trio) -> None:
    a, b, _ = trio
    async with aiohttp.ClientSession() as http:
        made = (
            await post(http, b.url, request(1, "tools/call", name="job", arguments={"seconds": 1}))
        )["result"]
        listen = request(
            2,
            "subscriptions/listen",
            notifications={"resourceSubscriptions": ["note://a"], "taskIds": [made["taskId"]]},
        )
        async with http.post(a.url, json=listen, headers=headers("subscriptions/listen")) as stream:
            acknowledged = await _next(stream)
            assert acknowledged["params"]["notifications"]["taskIds"] == [made["taskId"]]
            await post(
                http, b.url, request(3, "tools/call", name="touch", arguments={"uri": "note://a"})
            )
            seen = []
            while not any(m.get("params", {}).get("status") == "completed" for m in seen):
                seen.append(await _next(stream))
    methods = [m["method"] for m in seen]
    assert "notifications/resources/updated" in methods
    assert methods[-1] == "notifications/tasks"


async def _next(response: aiohttp.ClientResponse) -> Any:
    async with asyncio.timeout(15):
        while True:
            line = (await response.content.readline()).decode()
            if line.startswith("data:"):
                return json.loads(line[5:])
