"""The official MCP Python SDK's HTTP clients against our HTTP server (a real subprocess)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import anyio
import pytest
from mcp import ClientSession, types
from mcp.client.sse import sse_client
from mcp.client.streamable_http import streamable_http_client

if TYPE_CHECKING:
    from conftest import LaunchHttp

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples/everything_server.py"

pytestmark = pytest.mark.interop


@pytest.fixture(scope="module")
def base_url(launch_http: LaunchHttp) -> str:
    return launch_http("--serve", str(EXAMPLES)).rsplit("/mcp", 1)[0]


async def exercise(session: ClientSession) -> None:
    with anyio.fail_after(20):
        await session.initialize()
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


async def test_streamable_http_client(base_url: str) -> None:
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
        streamable_http_client(f"{base_url}/mcp") as streams,
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


async def test_legacy_sse_client(base_url: str) -> None:
    async with (
        sse_client(f"{base_url}/sse") as streams,
        ClientSession(streams[0], streams[1]) as session,
    ):
        await exercise(session)
