"""The client speaking 2026-07-28: a discover probe, a fallback to initialize for legacy
servers, input-required rounds and tasks answered by the usual callbacks, listen
streams; against our examples server over stdio and HTTP, and legacy peers."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from client_helpers import EVERYTHING, ROOT, needs_everything
from codex_mcp import Context, Server
from codex_mcp.client import Client, McpClientError, McpError, RequestTimeout
from support.processes import HttpProcess

EXAMPLES = str(ROOT / "examples/everything_server.py")


class Asked:
    """Callbacks that answer the server and remember what they were asked."""

    def __init__(self) -> None:
        self.elicitations: list[Any] = []
        self.samplings: list[Any] = []

    async def elicit(self, params: Any) -> Any:
        self.elicitations.append(params)
        return {
            "action": "accept",
            "content": {
                "name": "Zed",
                "confirm": True,
                "ok": True,
                "color": "teal",
                "context": "x",
            },
        }

    def sample(self, params: Any) -> Any:
        self.samplings.append(params)
        return {"role": "assistant", "content": {"type": "text", "text": "Paris"}, "model": "m"}

    def options(self) -> dict[str, Any]:
        return {
            "elicitation_handler": self.elicit,
            "sampling_handler": self.sample,
            "roots": [{"uri": "file:///work", "name": "work"}],
        }


@pytest.fixture(scope="module")
def examples_http() -> Iterator[str]:
    server = HttpProcess("--serve", EXAMPLES)
    yield server.url
    server.stop()


def modern_clients(http_url: str, asked: Asked, **options: Any) -> list[Client]:
    return [
        Client.stdio(
            [sys.executable, str(ROOT / "cmd/mcp"), "--serve", EXAMPLES],
            mode="auto",
            **asked.options(),
            **options,
        ),
        Client.http(http_url, mode="auto", **asked.options(), **options),
    ]


async def test_probe_goes_modern_and_rounds_use_the_callbacks(examples_http: str) -> None:
    for client_index in range(2):
        asked = Asked()
        async with modern_clients(examples_http, asked)[client_index] as client:
            assert client.is_stateless and client.protocol_version == "2026-07-28"
            assert client.server_info["name"] == "codex-mcp-everything"
            assert "tools" in client.server_capabilities
            assert client.transport.session_id is None  # no session over HTTP either
            result = await client.call_tool("test_input_required_result_multiple_inputs")
            assert result.text == "Paris Zed (1 roots)"
            assert [e["message"] for e in asked.elicitations] == ["What is your name?"]
            assert asked.samplings[0]["maxTokens"] == 50
            prompt = await client.get_prompt("test_input_required_result_prompt")
            assert prompt.messages[0]["content"]["text"].startswith("Use this context")
            await client.ping()  # server/discover: a stateless server has no ping


@pytest.mark.slow
async def test_tasks_are_followed_to_their_result(examples_http: str) -> None:
    for client_index in range(2):
        asked = Asked()
        async with modern_clients(examples_http, asked)[client_index] as client:
            before = await client.call_tool("test_tool_with_task")  # asks, then a task
            assert before.text == "Hello, Zed, from a task"
            inside = await client.call_tool("confirm_delete", {"filename": "x.txt"})
            assert inside.text == "x.txt: deleted"  # answered through tasks/update
            assert len(asked.elicitations) == 2
            failed = await client.call_tool("failing_job")
            assert failed.is_error
            with pytest.raises(McpError) as protocol_error:
                await client.call_tool("protocol_error_job", retries=0)
            assert protocol_error.value.code == -32603


async def test_listen_streams_what_was_asked(examples_http: str) -> None:
    for client_index in range(2):
        async with modern_clients(examples_http, Asked())[client_index] as client:
            async with client.listen(tools=True, prompts=True) as events:
                assert events.acknowledged == {"toolsListChanged": True, "promptsListChanged": True}
                await client.call_tool("test_trigger_prompt_change")
                method, params = await events.next(10)
                assert method == "notifications/prompts/list_changed"
                assert params["_meta"]["io.modelcontextprotocol/subscriptionId"] == events.id
            # The stream ended with the block; the session goes on.
            assert (await client.call_tool("greet", {"name": "x"})).text == "Hello, x!"


async def test_headers_logs_and_progress_over_http(examples_http: str) -> None:
    logs: list[Any] = []
    progress: list[float] = []
    async with Client.http(examples_http, mode="2026-07-28", logging_handler=logs.append) as client:
        # x-mcp-header: learned from tools/list (or after the server's -32020, once).
        assert (await client.call_tool("test_header_param", {"region": "é/ü"})).text == "region é/ü"
        await client.call_tool("test_tool_with_logging")
        assert logs == []  # no logLevel asked: no log messages
        await client.set_logging_level("info")
        await client.call_tool(
            "test_tool_with_progress", on_progress=lambda p: progress.append(p["progress"])
        )
        await client.call_tool("test_tool_with_logging")
        assert [log["data"] for log in logs][-1] == "Tool execution completed"
        assert progress == [0, 50, 100]


@needs_everything
async def test_auto_falls_back_to_initialize_for_a_legacy_server() -> None:
    async with Client.stdio(
        ["node", str(EVERYTHING.resolve()), "stdio"], mode="auto", timeout=20
    ) as client:
        assert not client.is_stateless
        assert client.protocol_version == "2025-06-18"
        assert any(tool.name == "echo" for tool in await client.list_tools())


async def test_stateless_only_against_a_legacy_server_fails_clearly(tmp_path: Path) -> None:
    legacy = tmp_path / "legacy.py"
    legacy.write_text(
        "import sys, json\n"
        "for line in sys.stdin:\n"
        "    m = json.loads(line)\n"
        "    if 'id' in m:\n"
        "        print(json.dumps({'jsonrpc': '2.0', 'id': m['id'],\n"
        "              'error': {'code': -32601, 'message': 'Method not found'}}), flush=True)\n"
    )
    with pytest.raises(McpError) as refused:
        async with Client.stdio([sys.executable, str(legacy)], mode="2026-07-28"):
            pass
    assert refused.value.code == -32601
    with pytest.raises(McpClientError):
        async with Client.stdio([sys.executable, str(legacy)], mode="auto", timeout=5):
            pass  # falls back to initialize, which this server refuses too


async def test_call_meta_is_what_the_caller_gave() -> None:
    """The `meta` a caller passes to call_tool is the request's `_meta`: the client's
    telemetry attributes (tool, arguments, server) used to be sent there instead."""
    server = Server("meta")

    @server.tool()
    def show(ctx: Context) -> str:
        return repr(sorted((ctx.meta or {}).items()))

    async with Client.memory(server) as client:
        result = await client.call_tool("show", {}, meta={"traceparent": "00-abc"})
        assert result.text == "[('traceparent', '00-abc')]"
    async with Client.memory(server, mode="2026-07-28") as client:
        result = await client.call_tool("show", {}, meta={"traceparent": "00-abc"})
        assert "('traceparent', '00-abc')" in result.text
        assert "io.modelcontextprotocol/protocolVersion" in result.text


async def test_a_task_past_the_call_timeout_is_cancelled_on_the_server() -> None:
    client = Client.stdio(
        [sys.executable, str(ROOT / "cmd/mcp"), "--serve", EXAMPLES], mode="2026-07-28"
    )
    created: list[str] = []
    original = client._follow_task

    async def remember(task: Any, timeout: float | None) -> Any:
        created.append(task["taskId"])
        return await original(task, timeout)

    client._follow_task = remember  # type: ignore[method-assign]
    async with client:
        with pytest.raises(RequestTimeout):
            await client.call_tool("slow_compute", {"seconds": 60}, timeout=0.5, retries=0)
        task = await client.get_task(created[0])
        for _ in range(100):
            if task["status"] != "working":
                break
            task = await client.get_task(created[0])
        assert task["status"] == "cancelled"


async def test_a_refused_version_the_server_lists_is_tried_once_more(tmp_path: Path) -> None:
    """-32022 naming the version we asked as supported (the suite's request-metadata
    scenario: a server refusing for a reason of its own) earns one retry, not a loop."""
    server = tmp_path / "refuses.py"
    server.write_text(
        "import sys, json\n"
        "refuse = int(sys.argv[1])\n"
        "for line in sys.stdin:\n"
        "    m = json.loads(line)\n"
        "    if 'id' not in m:\n"
        "        continue\n"
        "    version = m['params']['_meta']['io.modelcontextprotocol/protocolVersion']\n"
        "    if refuse:\n"
        "        refuse -= 1\n"
        "        answer = {'error': {'code': -32022, 'message': 'Unsupported protocol version',\n"
        "                  'data': {'supported': ['2026-07-28'], 'requested': version}}}\n"
        "    else:\n"
        "        answer = {'result': {'resultType': 'complete',\n"
        "                  'supportedVersions': ['2026-07-28'], 'capabilities': {}, '_meta':\n"
        "                  {'io.modelcontextprotocol/serverInfo': {'name': 'picky', 'version': '1'}}}}\n"
        "    print(json.dumps({'jsonrpc': '2.0', 'id': m['id'], **answer}), flush=True)\n"
    )
    async with Client.stdio([sys.executable, str(server), "1"], mode="2026-07-28") as client:
        assert client.server_info["name"] == "picky"
    with pytest.raises(McpError) as refused:
        async with Client.stdio([sys.executable, str(server), "5"], mode="2026-07-28"):
            pass
    assert refused.value.code == -32022
