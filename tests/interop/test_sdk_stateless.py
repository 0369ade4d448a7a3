"""The official Python SDK 2.3 client speaking 2026-07-28 to our examples server, over
stdio and Streamable HTTP (real subprocesses): its discover probe keeps it modern, its
input-required driver answers our rounds through its callbacks, and its listen stream
gets our list changes."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import anyio
import mcp_types as types
import pytest
from mcp.client import Client
from mcp.client.stdio import StdioServerParameters

if TYPE_CHECKING:
    from conftest import LaunchHttp

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples/everything_server.py"

pytestmark = pytest.mark.interop


@pytest.fixture(scope="module")
def examples_http(launch_http: LaunchHttp) -> str:
    return launch_http("--serve", str(EXAMPLES))


async def elicit(context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
    return types.ElicitResult(
        action="accept", content={"name": "Ada", "ok": True, "color": "teal", "context": "x"}
    )


async def sample(
    context: Any, params: types.CreateMessageRequestParams
) -> types.CreateMessageResult:
    return types.CreateMessageResult(
        role="assistant", content=types.TextContent(type="text", text="Paris"), model="m"
    )


async def roots(context: Any) -> types.ListRootsResult:
    return types.ListRootsResult(roots=[types.Root(uri="file:///work", name="work")])


def targets(http_url: str) -> list[Any]:
    stdio = StdioServerParameters(
        command=sys.executable, args=[str(ROOT / "cmd/mcp"), "--serve", str(EXAMPLES)]
    )
    return [stdio, http_url]


def text(result: Any) -> str:
    return "".join(getattr(block, "text", "") for block in result.content)


@pytest.mark.parametrize("mode", ["auto", "2026-07-28"])
async def test_sdk_client_speaks_2026_07_28(examples_http: str, mode: str) -> None:
    for server in targets(examples_http):
        async with Client(
            server,
            mode=mode,
            elicitation_callback=elicit,
            sampling_callback=sample,
            list_roots_callback=roots,
        ) as client:
            with anyio.fail_after(30):
                assert client.protocol_version == "2026-07-28", server
                if mode == "auto":  # pinned, it does not probe, so it never hears our name
                    assert client.server_info is not None
                    assert client.server_info.name == "codex-mcp-everything"
                names = {tool.name for tool in (await client.list_tools()).tools}
                assert {"greet", "test_input_required_result_multiple_inputs"} <= names
                greeting = await client.call_tool("greet", {"name": "SDK"})
                assert text(greeting) == "Hello, SDK!"
                # Three questions in one input-required round, through its callbacks.
                multiple = await client.call_tool("test_input_required_result_multiple_inputs")
                assert text(multiple) == "Paris Ada (1 roots)"
                rounds = await client.call_tool("test_input_required_result_multi_round")
                assert text(rounds).startswith("Ada likes")
                prompt = await client.get_prompt("test_input_required_result_prompt")
                assert prompt.messages[0].content.text.startswith("Use this context")  # type: ignore[union-attr]
                weather = await client.call_tool("weather", {"city": "Lima"})
                assert weather.structured_content == {
                    "city": "Lima",
                    "temperature_c": 21.5,
                    "conditions": "sunny",
                }


async def test_sdk_listen_gets_our_list_changes(examples_http: str) -> None:
    for server in targets(examples_http):
        async with Client(server, mode="auto") as client:
            with anyio.fail_after(30):
                async with client.listen(tools_list_changed=True) as subscription:
                    await client.call_tool("test_trigger_tool_change")
                    async for event in subscription:
                        assert type(event).__name__ == "ToolsListChanged"
                        break
