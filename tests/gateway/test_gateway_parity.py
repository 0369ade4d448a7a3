"""Parity: the same tests, with the official MCP SDK client, run directly against a server and
through the gateway wrapping it (`codex-mcp -- <server>`, passthrough: names and URIs kept).
Whatever a client can do with the server, it can do through the gateway. The direct half is
the official SDK client's stdio interop suite against our server."""

from __future__ import annotations

import functools
import sys
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from typing import Any

import anyio
import pytest

pytest.importorskip("mcp", reason="the official MCP SDK is not installed: pip install mcp")
from mcp import ClientSession, types
from mcp.client.stdio import StdioServerParameters, stdio_client

from .gateway_helpers import CANCELLABLE, CMD_MCP, EXAMPLES, TIME, gateway_env

pytestmark = pytest.mark.interop

Connect = Callable[..., AbstractAsyncContextManager[ClientSession]]


@asynccontextmanager
async def open_session(
    command: list[str], *, through: bool, **callbacks: Any
) -> AsyncIterator[ClientSession]:
    """An initialized SDK ClientSession on `command`, or on the gateway wrapping it."""
    argv = [sys.executable, CMD_MCP, "--", *command] if through else command
    params = StdioServerParameters(command=argv[0], args=argv[1:], env=gateway_env(None))
    async with (
        stdio_client(params) as (read, write),
        ClientSession(read, write, **callbacks) as session,
    ):
        with anyio.fail_after(30):
            await session.initialize()
        yield session


@pytest.fixture(params=["direct", "through the gateway"])
def connect(request: pytest.FixtureRequest) -> Connect:
    """connect(server_command, **callbacks), directly or through the gateway."""
    return functools.partial(open_session, through=request.param != "direct")


async def test_initialize_list_and_call(connect: Connect) -> None:
    async with connect(EXAMPLES) as session:
        tools = {tool.name: tool for tool in (await session.list_tools()).tools}
        assert {"test_simple_text", "weather", "add", "json_schema_2020_12_tool"} <= set(tools)
        assert tools["weather"].annotations is not None
        assert tools["weather"].annotations.read_only_hint is True
        result = await session.call_tool("test_simple_text", {})
        assert result.content[0].text == "This is a simple text response for testing."  # type: ignore[union-attr]
        assert not result.is_error
        await session.send_ping()


async def test_content_types_come_through_unchanged(connect: Connect) -> None:
    async with connect(EXAMPLES) as session:
        image = await session.call_tool("test_image_content", {})
        assert image.content[0].type == "image" and image.content[0].mime_type == "image/png"  # type: ignore[union-attr]
        mixed = await session.call_tool("test_multiple_content_types", {})
        assert [c.type for c in mixed.content] == ["text", "image", "resource"]
        failed = await session.call_tool("test_error_handling", {})
        assert failed.is_error
        assert "intentionally" in failed.content[0].text  # type: ignore[union-attr]


async def test_structured_output(connect: Connect) -> None:
    async with connect(EXAMPLES) as session:
        tools = {tool.name: tool for tool in (await session.list_tools()).tools}
        assert tools["weather"].output_schema is not None
        result = await session.call_tool("weather", {"city": "Oslo"})
        assert result.structured_content == {
            "city": "Oslo",
            "temperature_c": 21.5,
            "conditions": "sunny",
        }
        added = await session.call_tool("add", {"a": 2, "b": 3})
        assert added.structured_content == {"result": 5}
        bad = await session.call_tool("add", {"a": "two", "b": 3})
        assert bad.is_error
        assert "a" in bad.content[0].text  # type: ignore[union-attr]


async def test_progress_and_logging(connect: Connect) -> None:
    progress: list[tuple[float, float | None]] = []
    logs: list[Any] = []

    async def on_progress(value: float, total: float | None, message: str | None) -> None:
        progress.append((value, total))

    async def on_log(params: types.LoggingMessageNotificationParams) -> None:
        logs.append(params.data)

    async with connect(EXAMPLES, logging_callback=on_log) as session:
        await session.call_tool("test_tool_with_progress", {}, progress_callback=on_progress)
        await session.call_tool("test_tool_with_logging", {})
        with anyio.fail_after(5):
            while len(logs) < 3:
                await anyio.sleep(0.01)
    assert progress == [(0, 100), (50, 100), (100, 100)]
    assert logs == ["Tool execution started", "Tool processing data", "Tool execution completed"]


async def test_logging_set_level_filters(connect: Connect) -> None:
    logs: list[Any] = []

    async def on_log(params: types.LoggingMessageNotificationParams) -> None:
        logs.append(params.data)

    async with connect(EXAMPLES, logging_callback=on_log) as session:
        await session.set_logging_level("error")
        await session.call_tool("test_tool_with_logging", {})
        await session.send_ping()
    assert logs == []


async def test_elicitation_and_sampling_callbacks(connect: Connect) -> None:
    async def elicit(context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        assert params.message == "Who are you?"
        return types.ElicitResult(action="accept", content={"username": "ada", "email": "a@b.c"})

    async def sample(
        context: Any, params: types.CreateMessageRequestParams
    ) -> types.CreateMessageResult:
        text = params.messages[0].content.text  # type: ignore[union-attr]
        return types.CreateMessageResult(
            role="assistant",
            content=types.TextContent(type="text", text=text.upper()),
            model="fake",
        )

    async with connect(EXAMPLES, elicitation_callback=elicit, sampling_callback=sample) as session:
        elicited = await session.call_tool("test_elicitation", {"message": "Who are you?"})
        assert "action=accept" in elicited.content[0].text  # type: ignore[union-attr]
        assert "ada" in elicited.content[0].text  # type: ignore[union-attr]
        sampled = await session.call_tool("test_sampling", {"prompt": "hello"})
        assert sampled.content[0].text == "LLM response: HELLO"  # type: ignore[union-attr]


async def test_sampling_without_capability_is_a_tool_error(connect: Connect) -> None:
    async with connect(EXAMPLES) as session:
        result = await session.call_tool("test_sampling", {"prompt": "hello"})
        assert result.is_error
        assert "sampling" in result.content[0].text  # type: ignore[union-attr]


async def test_resources_prompts_and_completion(connect: Connect) -> None:
    async with connect(EXAMPLES) as session:
        resources = {str(r.uri) for r in (await session.list_resources()).resources}
        assert {
            "test://static-text",
            "test://static-binary",
            "test://watched-resource",
        } <= resources
        templates = (await session.list_resource_templates()).resource_templates
        assert [t.uri_template for t in templates] == ["test://template/{id}/data"]
        text = await session.read_resource("test://static-text")
        assert text.contents[0].text == "This is the content of the static text resource."  # type: ignore[union-attr]
        data = await session.read_resource("test://template/42/data")
        assert '"Data for ID: 42"' in data.contents[0].text  # type: ignore[union-attr]
        prompts = {p.name for p in (await session.list_prompts()).prompts}
        assert "test_prompt_with_arguments" in prompts
        prompt = await session.get_prompt("test_prompt_with_arguments", {"arg1": "a", "arg2": "b"})
        assert prompt.messages[0].content.text == "Prompt with arguments: arg1='a', arg2='b'"  # type: ignore[union-attr]
        completion = await session.complete(
            types.PromptReference(type="ref/prompt", name="test_prompt_with_arguments"),
            {"name": "arg1", "value": "par"},
        )
        assert completion.completion.values == ["paris", "park", "party"]


async def test_subscribe_and_resource_updated(connect: Connect) -> None:
    updated: list[str] = []

    async def on_message(message: Any) -> None:
        root = getattr(message, "root", message)
        if isinstance(root, types.ResourceUpdatedNotification):
            updated.append(str(root.params.uri))

    async with connect(EXAMPLES, message_handler=on_message) as session:
        await session.subscribe_resource("test://watched-resource")
        await session.call_tool("touch_watched_resource", {})
        with anyio.fail_after(5):
            while not updated:
                await anyio.sleep(0.01)
    assert updated == ["test://watched-resource"]


async def test_cancellation_stops_the_tool(connect: Connect) -> None:
    async with connect(CANCELLABLE) as session:
        with anyio.move_on_after(0.5):
            await session.call_tool("slow", {"seconds": 30})
        with anyio.fail_after(5):
            while True:
                counters = await session.call_tool("counters", {})
                if counters.structured_content and counters.structured_content["cancelled"] == 1:
                    break
                await anyio.sleep(0.05)
        assert counters.structured_content == {"started": 1, "cancelled": 1}


async def test_a_pypi_server_the_same_both_ways(connect: Connect) -> None:
    if not TIME.exists():
        pytest.skip("pip install mcp-server-time (a dev extra)")
    async with connect([str(TIME)]) as session:
        tools = {tool.name for tool in (await session.list_tools()).tools}
        assert tools - {"gateway_status"} == {"get_current_time", "convert_time"}
        now = await session.call_tool("get_current_time", {"timezone": "Europe/Oslo"})
        assert now.structured_content and now.structured_content["timezone"] == "Europe/Oslo"
        converted = await session.call_tool(
            "convert_time",
            {"source_timezone": "UTC", "time": "12:00", "target_timezone": "Asia/Tokyo"},
        )
        assert converted.structured_content
        assert converted.structured_content["target"]["datetime"].startswith(
            converted.structured_content["source"]["datetime"][:10]
        )
        bad = await session.call_tool("get_current_time", {"timezone": "Not/AZone"})
        assert bad.is_error


def members_typed_by_parent(schema: Any) -> Any:
    """The one repair the gateway makes to these schemas (decision 84), written out here.

    A member of anyOf/oneOf/allOf with neither a type nor a $ref takes its parent's type.
    """
    if isinstance(schema, list):
        return [members_typed_by_parent(item) for item in schema]
    if not isinstance(schema, dict):
        return schema
    out = dict(schema)
    if "type" in out:
        for key in ("anyOf", "oneOf", "allOf"):
            if isinstance(out.get(key), list):
                out[key] = [
                    {**m, "type": out["type"]}
                    if isinstance(m, dict) and "type" not in m and "$ref" not in m
                    else m
                    for m in out[key]
                ]
    out = {key: members_typed_by_parent(value) for key, value in out.items()}
    return out


async def test_the_listing_is_identical_both_ways() -> None:
    """Every definition the SDK sees, field by field, except the gateway's own status tool
    and the typed composition members of decision 84."""
    views = []
    for through in (False, True):
        async with open_session(EXAMPLES, through=through) as session:
            tools = [tool.model_dump() for tool in (await session.list_tools()).tools]
            templates = (await session.list_resource_templates()).model_dump()
            prompts = (await session.list_prompts()).model_dump()
        views.append(([t for t in tools if t["name"] != "gateway_status"], templates, prompts))
    direct, through_gateway = views
    repaired = [
        {**t, "input_schema": members_typed_by_parent(t["input_schema"])} for t in direct[0]
    ]
    assert repaired != direct[0], "the example server no longer has a composition to type"
    assert (repaired, *direct[1:]) == through_gateway
