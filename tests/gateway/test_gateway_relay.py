"""What a child sends while serving a call reaches the client that made it, through the
gateway: progress (with the client's own token), log messages, and the child's requests to
the client (elicitation, sampling, roots), which go out tied to the client's call; and a
client's cancellation reaches the child. With the child over stdio and over HTTP, and the
gateway itself over stdio and over HTTP."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from codex_mcp.client import Client, McpError, RequestTimeout, StreamableHttpTransport
from codex_mcp.core.jsonrpc import JsonObject

from .gateway_helpers import (
    CANCELLABLE,
    EXAMPLES,
    gateway,
    launch_http,
    launch_http_gateway,
    stdio,
    stop,
    until,
    write_config,
)

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def examples_over_http() -> Iterator[str]:
    """Our examples server over HTTP, to be a child reached by URL."""
    process, url = launch_http("--serve", str(ROOT / "examples/everything_server.py"))
    yield url
    stop(process)


@pytest.fixture(params=["stdio child", "http child", "http gateway"])
async def connect(
    request: pytest.FixtureRequest, tmp_path: Path, examples_over_http: str
) -> AsyncIterator[Callable[..., Client]]:
    """A factory of clients connected to a gateway whose child `ex` is the examples server
    (over stdio or HTTP, told its client can do sampling, elicitation and roots) and `cx`
    the cancellable one."""
    child = stdio(EXAMPLES) if request.param == "stdio child" else {"url": examples_over_http}
    # Shared children are told what Codex can do unless their entry says more: ours asks
    # the client for everything the gateway relays.
    child["client_capabilities"] = {"sampling": {}, "elicitation": {}, "roots": {}}
    config = write_config(tmp_path, {"ex": child, "cx": stdio(CANCELLABLE)})
    if request.param != "http gateway":
        yield lambda **options: gateway(config, **options)
        return
    process, url = launch_http_gateway(config)
    yield lambda **options: Client.http(url, **options)
    stop(process)


async def test_progress_and_logs_come_back_to_the_caller(connect: Callable[..., Client]) -> None:
    logs: list[Any] = []
    async with connect(logging_handler=lambda params: logs.append(params["data"])) as client:
        progress: list[tuple[float, float | None]] = []
        result = await client.call_tool(
            "ex__test_tool_with_progress",
            {},
            on_progress=lambda p: progress.append((p["progress"], p.get("total"))),
        )
        assert result.text == "Tool with progress executed successfully"
        assert progress == [(0, 100), (50, 100), (100, 100)]
        await client.call_tool("ex__test_tool_with_logging", {})
        await until(lambda: len(logs) >= 3, timeout=10)
    assert logs == ["Tool execution started", "Tool processing data", "Tool execution completed"]


async def test_elicitation_sampling_and_roots_reach_the_client(
    connect: Callable[..., Client],
) -> None:
    seen: list[tuple[str, Any]] = []

    def elicit(params: JsonObject, ctx: Any) -> JsonObject:
        seen.append(("elicit", _call_of(client, ctx)))
        assert params["message"] == "Who are you?"
        return {"action": "accept", "content": {"username": "ada", "email": "a@b.c"}}

    def sample(params: JsonObject, ctx: Any) -> JsonObject:
        seen.append(("sample", _call_of(client, ctx)))
        text = params["messages"][0]["content"]["text"]
        return {
            "role": "assistant",
            "content": {"type": "text", "text": text.upper()},
            "model": "m",
        }

    roots = [{"uri": "file:///work/project", "name": "project"}]
    client = connect(elicitation_handler=elicit, sampling_handler=sample, roots=roots)
    async with client:
        elicited = await client.call_tool("ex__test_elicitation", {"message": "Who are you?"})
        assert "action=accept" in elicited.text and "ada" in elicited.text
        sampled = await client.call_tool("ex__test_sampling", {"prompt": "hello"})
        assert sampled.text == "LLM response: HELLO"
        listed = await client.call_tool("ex__list_client_roots", {})
        assert listed.text == "file:///work/project"
    if isinstance(client.transport, StreamableHttpTransport):
        # Over HTTP the client can tell: each request came on the stream of the call it serves.
        assert seen == [("elicit", "tools/call"), ("sample", "tools/call")]


def _call_of(client: Client, ctx: Any) -> str | None:
    """The method of our request whose stream carried this server request, if any."""
    pending = client.session._outgoing.get(ctx.related_request_id)
    return pending.method if pending is not None else None


async def test_a_client_without_the_capability_gets_a_tool_error(
    connect: Callable[..., Client],
) -> None:
    async with connect() as client:
        result = await client.call_tool("ex__test_sampling", {"prompt": "hello"})
        assert result.is_error
        assert "sampling" in result.text


async def test_cancelling_a_call_cancels_it_in_the_child(connect: Callable[..., Client]) -> None:
    async with connect() as client:
        with pytest.raises(RequestTimeout):
            await client.call_tool("cx__slow", {"seconds": 30}, timeout=0.5, retries=0)

        async def cancelled() -> bool:
            counters = await client.call_tool("cx__counters", {})
            return counters.structured_content == {"started": 1, "cancelled": 1}

        await until(cancelled, timeout=10, every=0.1)
        with pytest.raises(McpError, match="Unknown tool"):
            await client.call_tool("cx__nothing", {}, retries=0)
