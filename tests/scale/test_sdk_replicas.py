"""The official SDK client runs a whole stateful session through a round-robin nginx over
three replicas sharing Redis, so its requests land on different replicas; and a replica
killed mid-session costs only the call it was running."""

from __future__ import annotations

import asyncio
import os
import signal
from typing import Any

import anyio
import pytest
from scale_setup import Replicas, round_robin

pytest.importorskip("mcp", reason="the official MCP SDK is not installed: pip install mcp")
from mcp import ClientSession, types
from mcp.client.streamable_http import streamable_http_client

pytestmark = [
    pytest.mark.interop,
    pytest.mark.filterwarnings("ignore:resources/subscribe is removed"),
]


async def test_a_whole_sdk_session_across_three_replicas(replicas: Replicas, nginx: Any) -> None:
    group = replicas(3)
    url = nginx(round_robin(group))
    pids = {str(r.pid) for r in group}
    updates: list[str] = []
    updated = asyncio.Event()

    async def elicit(context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        return types.ElicitResult(action="accept", content={"name": "Ann"})

    async def on_message(message: Any) -> None:
        if isinstance(message, types.ResourceUpdatedNotification):
            updates.append(str(message.params.uri))
            updated.set()

    async with (
        streamable_http_client(url) as streams,
        ClientSession(
            streams[0], streams[1], elicitation_callback=elicit, message_handler=on_message
        ) as session,
    ):
        with anyio.fail_after(60):
            await session.initialize()
            tools = {tool.name for tool in (await session.list_tools()).tools}
            assert {"whoami", "steps", "ask", "touch"} <= tools
            served = set()
            for index in range(4):
                progress: list[float] = []

                async def on_progress(
                    value: float, total: float | None, message: str | None, seen: Any = progress
                ) -> None:
                    seen.append(value)

                result = await session.call_tool(
                    "steps", {"count": 3, "tag": f"t{index}"}, progress_callback=on_progress
                )
                assert not result.is_error and progress == [1, 2, 3]
                served.add(result.content[0].text)  # type: ignore[union-attr]
            for _ in range(3):  # the answer's POST lands on another replica than the call's
                asked = await session.call_tool("ask", {})
                text = asked.content[0].text  # type: ignore[union-attr]
                assert text.startswith("hello Ann from ")
                served.add(text.rsplit(" ", 1)[1])
            assert served <= pids and len(served) >= 2
            await session.subscribe_resource("note://a")  # type: ignore[arg-type]
            await session.call_tool("touch", {"uri": "note://b"})  # not subscribed
            await session.call_tool("touch", {"uri": "note://a"})  # reaches the GET stream
            await asyncio.wait_for(updated.wait(), 15)
            read = await session.read_resource("note://a")  # type: ignore[arg-type]
            assert read.contents[0].text == "note a"  # type: ignore[union-attr]
    assert updates == ["note://a"]


async def test_a_replica_killed_mid_session_loses_only_its_call(
    replicas: Replicas, nginx: Any
) -> None:
    group = replicas(3)
    url = nginx(round_robin(group))
    async with (
        streamable_http_client(url) as streams,
        ClientSession(streams[0], streams[1]) as session,
    ):
        with anyio.fail_after(60):
            await session.initialize()
            before: set[str] = set()
            for _ in range(12):  # round-robin, with the GET stream's requests in between
                before.add((await session.call_tool("whoami", {})).content[0].text)  # type: ignore[union-attr]
            assert len(before) == 3
            call = asyncio.ensure_future(session.call_tool("slow", {"seconds": 30}))
            victim = None
            while victim is None:
                await asyncio.sleep(0.05)
                victim = next((r for r in group if "slow call started" in r.stderr), None)
            os.kill(victim.pid, signal.SIGKILL)
            outcome: Any = None
            try:
                outcome = await asyncio.wait_for(call, 20)
            except Exception as exc:  # the call died with its replica
                outcome = exc
            assert isinstance(outcome, Exception) or outcome.is_error, outcome
            result = await session.call_tool("echo", {"message": "still here"})
            assert result.content[0].text == "still here"  # type: ignore[union-attr]
            after = set()
            for _ in range(8):
                after.add((await session.call_tool("whoami", {})).content[0].text)  # type: ignore[union-attr]
    survivors = {str(r.pid) for r in group if r is not victim}
    assert after == survivors
