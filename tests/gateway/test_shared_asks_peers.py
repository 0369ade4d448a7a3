"""Real servers that use the client inside their calls, shared behind `codex-mcp-http`, with
the official `mcp` Python SDK client as the front: a child on the official Python SDK
(servers/sdk_asker.py) and `@modelcontextprotocol/server-everything` (npm). Neither marks
its requests to the client with the call they belong to (no progress token, no related
request on stdio). While one session uses the child, elicitation, sampling, roots and logs
in a call work; once a second session has used it, each fails with the error that names
the fix, the gateway's log says it once, and gateway_status and `codex-mcp lint` say it.
specs/gateway.md, "Relaying": Which call."""

from __future__ import annotations

import json
import subprocess
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import ClientSession, types
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError

from .gateway_helpers import (
    CMD_MCP,
    EVERYTHING,
    MISSING_NPM,
    PY,
    SERVERS,
    gateway_env,
    launch_http_gateway,
    stdio,
    stop,
    until,
    write_config,
)

ASKER = [PY, str(SERVERS / "sdk_asker.py")]
FIX = '"per_session": true'
#: What the shared child is told its client can do (Codex's default is elicitation alone).
EVERY_QUESTION = {"elicitation": {"form": {}}, "sampling": {}, "roots": {}}
ROOT_URI = "file:///work/project"


class SdkFront:
    """One official-SDK client session of the gateway, answering every kind of question."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.asked: list[str] = []
        self.logs: list[Any] = []

    async def elicit(self, _context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        self.asked.append("elicitation")
        return types.ElicitResult(action="accept", content={"name": self.name, "string": self.name})

    async def sample(
        self, _context: Any, _params: types.CreateMessageRequestParams
    ) -> types.CreateMessageResult:
        self.asked.append("sampling")
        return types.CreateMessageResult(
            role="assistant",
            content=types.TextContent(type="text", text=f"word-of-{self.name}"),
            model="test",
        )

    async def roots(self, _context: Any) -> types.ListRootsResult:
        self.asked.append("roots")
        return types.ListRootsResult(roots=[types.Root(uri=f"{ROOT_URI}/{self.name}")])

    async def log(self, params: types.LoggingMessageNotificationParams) -> None:
        self.logs.append(params.data)

    @asynccontextmanager
    async def session(self, url: str) -> AsyncIterator[ClientSession]:
        async with (
            streamable_http_client(url) as streams,
            ClientSession(
                streams[0],
                streams[1],
                sampling_callback=self.sample,
                elicitation_callback=self.elicit,
                list_roots_callback=self.roots,
                logging_callback=self.log,
            ) as session,
        ):
            with anyio.fail_after(30):
                await session.initialize()
            yield session


def text_of(result: types.CallToolResult) -> str:
    return " ".join(c.text for c in result.content if isinstance(c, types.TextContent))


async def gateway_status(session: ClientSession) -> dict[str, dict[str, Any]]:
    result = await session.call_tool("gateway_status", {})
    assert result.structured_content is not None
    return {entry["name"]: entry for entry in result.structured_content["servers"]}


@pytest.fixture
def serve(tmp_path: Path) -> Any:
    processes = []
    logs: list[str] = []

    def start(servers: dict[str, Any]) -> tuple[str, list[str], Path]:
        config = write_config(tmp_path, servers)
        process, url = launch_http_gateway(config, log=logs)
        processes.append(process)
        return url, logs, config

    yield start
    for process in processes:
        stop(process)


@pytest.mark.interop
async def test_official_python_sdk_child_asks_in_calls_while_one_session_uses_it(
    serve: Any,
) -> None:
    url, logs, config = serve({"sdk": stdio(ASKER, client_capabilities=EVERY_QUESTION)})
    assert [f for f in lint(config)["findings"] if f["rule"] == "per-session"] == []
    a, b = SdkFront("A"), SdkFront("B")
    async with AsyncExitStack() as stack:
        first = await stack.enter_async_context(a.session(url))
        assert text_of(await first.call_tool("sdk__ask_name", {"who": "A"})) == "accept:A"
        assert text_of(await first.call_tool("sdk__sample", {})) == "sampled:word-of-A"
        assert text_of(await first.call_tool("sdk__roots", {})) == f"roots:{ROOT_URI}/A"
        assert text_of(await first.call_tool("sdk__log_and_echo", {"text": "one"})) == "one"
        assert "log:one" in a.logs
        assert a.asked == ["elicitation", "sampling", "roots"]
        # Two calls in flight at once: both A's, so asked on A's own stream.
        async with anyio.create_task_group() as both:
            for _ in range(2):
                both.start_soon(first.call_tool, "sdk__ask_name", {"who": "A"})
        assert a.asked == ["elicitation", "sampling", "roots", "elicitation", "elicitation"]
        assert (await gateway_status(first))["sdk"]["sessions"] == "one"

        second = await stack.enter_async_context(b.session(url))
        assert text_of(await second.call_tool("sdk__log_and_echo", {"text": "two"})) == "two"
        for tool in ("ask_name", "sample", "roots"):
            with pytest.raises(MCPError) as refused:
                await first.call_tool(f"sdk__{tool}", {"who": "A"})
            message = str(refused.value)
            assert FIX in message and "'sdk'" in message and "during a call" in message
        assert len(a.asked) == 5 and b.asked == []
        assert "log:two" not in a.logs + b.logs  # whose it was, the pipe did not say
        status = (await gateway_status(second))["sdk"]
        assert status["sessions"] == "several"
        assert status["unrouted_in_calls"] == 4  # the log line and three questions
        assert FIX in status["advice"]
    warned = [line for line in logs if line.count("sdk: ") and FIX in line]
    assert len(warned) == 1, logs  # said once; later ones at debug
    # Later, lint names the server, what it was seen to send, and the fix.
    (finding,) = [f for f in lint(config)["findings"] if f["rule"] == "per-session"]
    assert finding["severity"] == "warn"
    assert FIX in finding["message"]
    for kind in ("elicitation/create", "sampling/createMessage", "roots/list", "logging"):
        assert kind in finding["message"]


@pytest.mark.interop
async def test_server_everything_asks_in_calls_while_one_session_uses_it(serve: Any) -> None:
    if not EVERYTHING.exists():
        pytest.skip(MISSING_NPM)
    url, _, _ = serve({"everything": stdio(EVERYTHING, client_capabilities=EVERY_QUESTION)})
    a, b = SdkFront("A"), SdkFront("B")
    async with AsyncExitStack() as stack:
        first = await stack.enter_async_context(a.session(url))

        async def asked_roots_at_start() -> bool:  # outside any call, before A used it: nobody's
            return bool((await gateway_status(first))["everything"]["unrouted_messages"])

        await until(asked_roots_at_start, 30)  # (on a loaded machine it once came in A's call)
        elicited = text_of(await first.call_tool("everything__trigger_elicitation_request", {}))
        assert "accept" in elicited, elicited
        sampled = await first.call_tool(
            "everything__trigger_sampling_request", {"prompt": "hi", "maxTokens": 5}
        )
        assert "word-of-A" in text_of(sampled)
        listed = text_of(await first.call_tool("everything__get_roots_list", {}))
        assert f"URI: {ROOT_URI}/A" in listed, listed
        assert a.asked == ["elicitation", "sampling", "roots"]

        second = await stack.enter_async_context(b.session(url))
        assert "B" in text_of(await second.call_tool("everything__echo", {"message": "B"}))
        asked = list(a.asked)
        for tool, arguments in (
            ("trigger_elicitation_request", {}),
            ("trigger_sampling_request", {"prompt": "hi", "maxTokens": 5}),
        ):
            try:
                result = await first.call_tool(f"everything__{tool}", arguments)
            except MCPError as error:
                said = str(error)
            else:
                said = text_of(result)
            assert FIX in said and "'everything'" in said, said
        assert a.asked == asked and b.asked == []
        status = (await gateway_status(second))["everything"]
        assert status["unrouted_in_calls"] == 2 and FIX in status["advice"]
        # It keeps the roots it was given, the first client's, and shows them to any
        # client: state per client, the other reason a server must be per_session.
        kept = text_of(await second.call_tool("everything__get_roots_list", {}))
        assert f"URI: {ROOT_URI}/A" in kept and b.asked == []


def lint(config: Path) -> dict[str, Any]:
    """`codex-mcp lint CONFIG --json` as a user runs it; its one server's report."""
    shown = subprocess.run(
        [PY, CMD_MCP, "lint", str(config), "--json"],
        capture_output=True,
        text=True,
        timeout=120,
        env=gateway_env(config),
        check=False,
    )
    (server,) = json.loads(shown.stdout)["servers"]
    return server  # type: ignore[no-any-return]
