"""The client over stdio: our server, the official SDK, server-everything, Content-Length
framing, and servers that die."""

from __future__ import annotations

import asyncio
import os
import signal
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from client_helpers import (
    EVERYTHING,
    OUR_SERVER,
    SERVERS,
    needs_everything,
    sdk_command,
    wait_for_line,
)
from codex_mcp.client import (
    Client,
    ConnectionClosed,
    McpClientError,
    RequestTimeout,
    SpawnError,
    StdioTransport,
)


def pid_of(client: Client) -> int:
    transport = client.transport
    assert isinstance(transport, StdioTransport) and transport.process is not None
    return transport.process.pid


async def test_our_stdio_server() -> None:
    async with Client.stdio(OUR_SERVER, server_name="ours") as client:
        names = [t.qualified_name for t in await client.list_tools(qualify=True)]
        assert "mcp__ours__echo" in names
        assert (await client.call_tool("echo", {"message": "hi"})).text == "hi"
        progress: list[dict] = []
        result = await client.call_tool("sleep", {"seconds": 1.2}, on_progress=progress.append)
        assert not result.is_error and progress and progress[0]["progress"] == 1
        pid = pid_of(client)
    await asyncio.sleep(0)
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)  # closing the client stopped the server


@pytest.mark.slow
async def test_sdk_stdio_server(events_file: Path) -> None:
    async with Client.stdio(sdk_command(), env={"EVENTS_FILE": str(events_file)}) as client:
        assert client.server_info["name"] == "sdk-test-server"
        assert {t.name for t in await client.list_tools()} >= {"echo", "add", "slow", "fail"}
        assert (await client.call_tool("add", {"a": 2, "b": 3})).text == "5"
        failed = await client.call_tool("fail", {"message": "nope"})
        assert failed.is_error
        # A timeout cancels on the server side: the SDK's tool sees the cancellation.
        with pytest.raises(RequestTimeout):
            await client.call_tool("slow", {"seconds": 30, "tag": "t1"}, timeout=0.5)
        assert wait_for_line(events_file, "started t1")
        assert await asyncio.to_thread(wait_for_line, events_file, "cancelled t1")
        # The session is still fine afterwards.
        assert (await client.call_tool("echo", {"message": "still here"})).text == "still here"
        read = await client.read_resource("test://greeting")
        assert read.contents[0]["text"] == "hello from the sdk"
        prompt = await client.get_prompt("summarize", {"text": "abc"})
        assert "abc" in prompt.messages[0]["content"]["text"]


async def _two_pending_calls(client: Client, target: str, events_file: Path) -> list[Any]:
    """Two calls really running on the server, each known to have started."""
    if target == "sdk":
        calls = [
            asyncio.create_task(client.call_tool("slow", {"seconds": 30, "tag": tag}, retries=3))
            for tag in ("a", "b")
        ]
        for tag in ("a", "b"):
            assert await asyncio.to_thread(wait_for_line, events_file, f"started {tag}", 20)
        return calls
    started = {tag: asyncio.Event() for tag in ("a", "b")}
    calls = [
        asyncio.create_task(
            client.call_tool(
                "block", {"tag": tag}, retries=3, on_progress=lambda _, e=started[tag]: e.set()
            )
        )
        for tag in ("a", "b")
    ]
    await asyncio.wait_for(asyncio.gather(*(e.wait() for e in started.values())), 20)
    return calls


@pytest.mark.parametrize("target", ["ours", "sdk"])
async def test_sigkill_mid_call_fails_every_pending_request_at_once(
    target: str, events_file: Path
) -> None:
    if target == "ours":
        command = [*OUR_SERVER, "--serve", str(SERVERS / "blocking.py")]
    else:
        command = sdk_command()
    async with Client.stdio(command, env={"EVENTS_FILE": str(events_file)}) as client:
        calls = await _two_pending_calls(client, target, events_file)
        assert not any(call.done() for call in calls)
        os.kill(pid_of(client), signal.SIGKILL)
        started = time.monotonic()
        outcomes = await asyncio.wait_for(asyncio.gather(*calls, return_exceptions=True), 5)
        assert time.monotonic() - started < 1.0
        for outcome in outcomes:  # both failed, not answered, and were not retried
            assert isinstance(outcome, ConnectionClosed), outcome
            assert "SIGKILL" in str(outcome)
        with pytest.raises(ConnectionClosed):
            await client.call_tool("echo", {"message": "anyone?"})


async def test_server_that_exits_at_startup_reports_its_stderr() -> None:
    command = [
        sys.executable,
        "-c",
        "import sys; print('no config found', file=sys.stderr); sys.exit(3)",
    ]
    started = time.monotonic()
    with pytest.raises(ConnectionClosed, match=r"exited with code 3(.|\n)*no config found"):
        async with Client.stdio(command):
            pass
    assert time.monotonic() - started < 2


async def test_command_not_found() -> None:
    with pytest.raises(SpawnError, match="command not found"):
        async with Client.stdio(["/nonexistent/mcp-server"]):
            pass


async def test_silent_server_times_out_initialize() -> None:
    command = [sys.executable, "-c", "import time; time.sleep(30)"]
    with pytest.raises(RequestTimeout, match="initialize"):
        async with Client.stdio(command, timeout=0.5):
            pass


async def test_content_length_framing() -> None:
    command = [sys.executable, str(SERVERS / "content_length_server.py")]
    async with Client.stdio(command, framing="content-length") as client:
        assert [t.name for t in await client.list_tools()] == ["shout"]
        assert (await client.call_tool("shout", {"text": "hi"})).text == "HI"


async def test_large_results_and_many_answers_arrive_whole() -> None:
    # The reader takes stdout in chunks: a 3 MB answer spans many, and 200 concurrent calls'
    # answers share them; each must come out whole and matched to its call.
    async with Client.stdio(OUR_SERVER, env={"CODEX_MCP_BENCH_TOOLS": "1"}) as client:
        big = await client.call_tool("blob", {"size": 3_000_000})
        assert big.text == "x" * 3_000_000
        messages = [f"message {i} " + "y" * (i * 37 % 5000) for i in range(200)]
        results = await asyncio.gather(
            *(client.call_tool("echo", {"message": m}) for m in messages)
        )
        assert [r.text for r in results] == messages


async def test_a_server_that_stops_reading_makes_senders_wait_past_the_high_water() -> None:
    # A server that never reads its stdin: what we send piles up in the pipe and then in
    # our write buffer. Under 1 MB a send returns nothing to await (the relay's hot path);
    # past it, each send returns a wait that ends only when the pipe drains (or the
    # server goes away, which fails it with the connection's error).
    transport = StdioTransport([sys.executable, "-c", "import time; time.sleep(60)"])
    await transport.start(lambda message: None, lambda exc: None)
    try:
        filler = {"jsonrpc": "2.0", "method": "notifications/x", "params": {"pad": "z" * 65536}}
        for _ in range(4):  # 256 KB: the pipe (64 KB) fills, the rest waits in our buffer
            assert transport.send_nowait(filler) is None
        await asyncio.sleep(0)  # one loop turn: the queued messages are written
        waits = []
        for _ in range(40):  # 2.5 MB more, a loop turn after each send
            waits.append(transport.send_nowait(filler))
            await asyncio.sleep(0)
        assert waits[0] is None  # still under the high-water mark then
        backed_up = [wait for wait in waits if wait is not None]
        assert backed_up, "no send waited with more than 1 MB unwritten"
        pending = [asyncio.ensure_future(wait) for wait in backed_up]
        await asyncio.sleep(0)
        assert not any(wait.done() for wait in pending)
    finally:
        await transport.close()
    for wait in pending:
        with pytest.raises(ConnectionClosed):
            await asyncio.wait_for(wait, 10)


@needs_everything
async def test_server_everything_stdio() -> None:
    sampled: list[dict] = []

    async def sampling(params: dict) -> dict:
        sampled.append(params)
        return {"role": "assistant", "content": {"type": "text", "text": "42"}, "model": "test"}

    async with Client.stdio(
        [str(EVERYTHING), "stdio"], sampling_handler=sampling, server_name="everything"
    ) as client:
        tools = await client.list_tools(qualify=True, cache=False)
        names = {t.name for t in tools}
        assert {"echo", "get-sum", "trigger-sampling-request"} <= names
        # Codex's name for it: `-` is not kept (lint/codex_model/names.py, decision 59)
        assert "mcp__everything__get_sum" in {t.qualified_name for t in tools}
        assert (
            await client.call_tool("get-sum", {"a": 2, "b": 40})
        ).text == "The sum of 2 and 40 is 42."
        result = await client.call_tool(
            "trigger-sampling-request", {"prompt": "what?", "maxTokens": 10}
        )
        assert sampled and "42" in result.text
        resources = await client.list_resources(all_pages=True)
        assert resources and resources.next_cursor is None
        prompts = await client.list_prompts()
        assert prompts


async def test_not_connected_error() -> None:
    client = Client.stdio(OUR_SERVER)
    with pytest.raises(McpClientError, match="not connected"):
        _ = client.server_info
