"""The official MCP Python SDK's HTTP clients against our HTTP server (real subprocesses)."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from http_process import SERVERS, HttpProcess
from mcp import ClientSession, types
from mcp.client.sse import sse_client
from mcp.client.streamable_http import streamable_http_client

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples/everything_server.py"

pytestmark = pytest.mark.interop


@pytest.fixture(scope="module")
def examples() -> Iterator[HttpProcess]:
    server = HttpProcess("--serve", str(EXAMPLES))
    yield server
    server.stop()


@pytest.fixture(scope="module")
def builtin() -> Iterator[HttpProcess]:
    server = HttpProcess()
    yield server
    server.stop()


@pytest.fixture(scope="module")
def interactive() -> Iterator[HttpProcess]:
    server = HttpProcess("--serve", str(SERVERS / "interactive.py"))
    yield server
    server.stop()


async def exercise(session: ClientSession) -> None:
    with anyio.fail_after(20):
        init = await session.initialize()
    assert init.server_info.name
    names = {tool.name for tool in (await session.list_tools()).tools}
    assert "test_tool_with_progress" in names
    progress: list[float] = []

    async def on_progress(value: float, total: float | None, message: str | None) -> None:
        progress.append(value)

    result = await session.call_tool("test_tool_with_progress", {}, progress_callback=on_progress)
    assert not result.is_error
    assert progress == [0, 50, 100]
    weather = await session.call_tool("weather", {"city": "Lima"})
    assert weather.structured_content == {
        "city": "Lima",
        "temperature_c": 21.5,
        "conditions": "sunny",
    }


async def test_streamable_http_client_with_the_examples_server(examples: HttpProcess) -> None:
    async def elicit(context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        return types.ElicitResult(action="accept", content={"username": "u", "email": "e@x"})

    async def sample(
        context: Any, params: types.CreateMessageRequestParams
    ) -> types.CreateMessageResult:
        return types.CreateMessageResult(
            role="assistant", content=types.TextContent(type="text", text="pong"), model="m"
        )

    logs: list[Any] = []

    async def on_log(params: types.LoggingMessageNotificationParams) -> None:
        logs.append(params.data)

    async with (
        streamable_http_client(examples.url) as streams,
        ClientSession(
            streams[0],
            streams[1],
            elicitation_callback=elicit,
            sampling_callback=sample,
            logging_callback=on_log,
        ) as session,
    ):
        await exercise(session)
        elicited = await session.call_tool("test_elicitation", {"message": "who?"})
        assert "action=accept" in elicited.content[0].text  # type: ignore[union-attr]
        sampled = await session.call_tool("test_sampling", {"prompt": "ping"})
        assert sampled.content[0].text == "LLM response: pong"  # type: ignore[union-attr]
        await session.call_tool("test_tool_with_logging", {})
    assert logs == ["Tool execution started", "Tool processing data", "Tool execution completed"]


async def test_legacy_sse_client(examples: HttpProcess) -> None:
    async with (
        sse_client(f"{examples.base}/sse") as streams,
        ClientSession(streams[0], streams[1]) as session,
    ):
        await exercise(session)


async def test_progress_of_the_builtin_sleep_arrives_during_the_call(builtin: HttpProcess) -> None:
    arrivals: list[tuple[float, float]] = []

    async def on_progress(value: float, total: float | None, message: str | None) -> None:
        arrivals.append((time.monotonic(), value))

    async with (
        streamable_http_client(builtin.url) as streams,
        ClientSession(streams[0], streams[1]) as session,
    ):
        with anyio.fail_after(20):
            init = await session.initialize()
            assert {t.name for t in (await session.list_tools()).tools} >= {"echo", "sleep"}
            echoed = await session.call_tool("echo", {"message": "sdk"})
            assert echoed.content[0].text == "sdk"  # type: ignore[union-attr]
            result = await session.call_tool("sleep", {"seconds": 2}, progress_callback=on_progress)
            done = time.monotonic()
    assert init.protocol_version
    assert result.content[0].text == "slept 2 s"  # type: ignore[union-attr]
    assert [value for _, value in arrivals] == [1, 2]
    assert done - arrivals[0][0] >= 0.7, "the first progress came only at the end"


@pytest.mark.filterwarnings("ignore:The logging capability is deprecated")
async def test_elicitation_sampling_logging_and_progress_callbacks(
    interactive: HttpProcess,
) -> None:
    prompts: list[str] = []

    async def elicit(context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        prompts.append(params.message)
        return types.ElicitResult(action="accept", content={"name": "Ada"})

    async def sample(
        context: Any, params: types.CreateMessageRequestParams
    ) -> types.CreateMessageResult:
        prompts.append(params.messages[0].content.text)  # type: ignore[union-attr]
        return types.CreateMessageResult(
            role="assistant", content=types.TextContent(type="text", text="short"), model="tiny"
        )

    logs: list[tuple[str, Any]] = []

    async def on_log(params: types.LoggingMessageNotificationParams) -> None:
        logs.append((params.level, params.data))

    progress: list[str | None] = []

    async def on_progress(value: float, total: float | None, message: str | None) -> None:
        progress.append(message)

    async with (
        streamable_http_client(interactive.url) as streams,
        ClientSession(
            streams[0],
            streams[1],
            elicitation_callback=elicit,
            sampling_callback=sample,
            logging_callback=on_log,
        ) as session,
    ):
        with anyio.fail_after(20):
            await session.initialize()
            named = await session.call_tool("ask_name", {})
            summary = await session.call_tool("summarize", {"text": "a long story"})
            await session.set_logging_level("info")  # per session: drops the debug line
            chatty = await session.call_tool("chatty", {"tag": "c"}, progress_callback=on_progress)
    assert named.content[0].text == "hello Ada"  # type: ignore[union-attr]
    assert summary.content[0].text == "model tiny said short"  # type: ignore[union-attr]
    assert chatty.content[0].text == "c done"  # type: ignore[union-attr]
    assert prompts == ["What is your name?", "Summarize: a long story"]
    assert logs == [("info", "c info"), ("warning", "c warning")]
    assert progress == ["c half", "c all"]


async def test_cancellation_reaches_the_tool(interactive: HttpProcess) -> None:
    async with (
        streamable_http_client(interactive.url) as streams,
        ClientSession(streams[0], streams[1]) as session,
    ):
        with anyio.fail_after(20):
            await session.initialize()
            with anyio.move_on_after(0.5) as scope:
                await session.call_tool("hang", {})
            assert scope.cancelled_caught
            state = ""
            for _ in range(50):  # the cancellation travels as its own POST
                state = (await session.call_tool("cancelled", {})).content[0].text  # type: ignore[union-attr]
                if state == "cancelled":
                    break
                await anyio.sleep(0.05)
            assert state == "cancelled"
