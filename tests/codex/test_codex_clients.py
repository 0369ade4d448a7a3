"""`codex-mcp --serve codex` and `codex-mcp-http --serve codex` as real subprocesses, called
by real clients: the official MCP SDK, the MCP Inspector CLI, and the Codex CLI itself
(Codex calling Codex through MCP). Codex, inside and out, talks to the fake model."""

from __future__ import annotations

import asyncio
import json
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from codex_mcp.client import Client
from interop import fake_responses_provider as fake
from interop.fake_responses_provider import FakeProvider
from mcp import ClientSession
from mcp.client.extension import NotificationBinding
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client
from pydantic import BaseModel, ConfigDict
from support.processes import HttpProcess

from .conftest import CODEX, ROOT, codex_env, needs_codex, write_codex_home
from .processes import group, group_ends

pytestmark = [pytest.mark.interop, needs_codex]
INSPECTOR = ROOT / ".tools/npm/node_modules/.bin/mcp-inspector"
needs_inspector = pytest.mark.skipif(
    not INSPECTOR.exists() or shutil.which("node") is None,
    reason="no MCP Inspector (run scripts/setup.sh) or no node on PATH",
)
STDIO = [sys.executable, str(ROOT / "cmd/mcp"), "--serve", "codex"]


@pytest.fixture
def codex_http(codex_home: Path, workdir: Path) -> Iterator[HttpProcess]:
    """`codex-mcp-http --serve codex --port 0`, with CODEX_HOME pointing at the fake model."""
    server = HttpProcess(
        "--serve", "codex", env={**os.environ, **codex_env(codex_home)}, cwd=workdir
    )
    yield server
    server.stop()


class CodexEventParams(BaseModel):
    model_config = ConfigDict(extra="allow")


class Events(list[dict[str, Any]]):
    async def __call__(self, params: CodexEventParams) -> None:
        self.append(params.model_dump())

    def binding(self) -> NotificationBinding[Any]:
        return NotificationBinding(method="codex/event", params_type=CodexEventParams, handler=self)

    async def wait_for_completion(self) -> None:
        with anyio.fail_after(15):
            while not any(event["msg"]["type"] == "task_complete" for event in self):
                await anyio.sleep(0.01)


async def call_codex(session: ClientSession, events: Events, prompt: str) -> str:
    with anyio.fail_after(30):
        await session.initialize()
    assert {tool.name for tool in (await session.list_tools()).tools} == {"codex", "codex-reply"}
    with anyio.fail_after(60):
        result = await session.call_tool("codex", {"prompt": prompt})
    assert not result.is_error, result
    assert result.structured_content is not None
    assert result.structured_content["content"] == f"You said: {prompt}"
    thread_id = str(result.structured_content["threadId"])
    await events.wait_for_completion()
    assert {event["_meta"]["threadId"] for event in events} == {thread_id}
    return thread_id


async def test_the_sdk_calls_codex_over_http_and_the_log_names_the_session(
    codex_http: HttpProcess, codex_home: Path, fake_model: tuple[FakeProvider, int]
) -> None:
    provider, _ = fake_model
    provider.responder = fake.echo_prompt()
    events = Events()
    async with (
        streamable_http_client(codex_http.url) as streams,
        ClientSession(streams[0], streams[1], notification_bindings=[events.binding()]) as s,
    ):
        await call_codex(s, events, "over http")
    # Seed 004's file log, each line about a session tagged with its id.
    log = (codex_home / "log/codex-rmcp.log").read_text()
    [session_id] = re.findall(
        r"codex_mcp\.codex: \[session (\S+)\] Codex app-server started \(pid \d+\)", log
    )
    # The SDK's DELETE ended the session; its app-server stops right after.
    await logged(codex_home, f"[session {session_id}] Codex app-server stopped")


async def logged(codex_home: Path, text: str) -> None:
    with anyio.fail_after(15):
        while text not in (codex_home / "log/codex-rmcp.log").read_text():
            await anyio.sleep(0.05)


async def test_the_sdk_calls_codex_over_stdio(
    codex_home: Path, workdir: Path, fake_model: tuple[FakeProvider, int]
) -> None:
    provider, _ = fake_model
    provider.responder = fake.echo_prompt()
    events = Events()
    params = StdioServerParameters(
        command=STDIO[0],
        args=[*STDIO[1:], "--log-level", "trace"],  # RUST_LOG's word: every app-server message
        env={**os.environ, **codex_env(codex_home)},
        cwd=workdir,
    )
    async with (
        stdio_client(params) as (read, write),
        ClientSession(read, write, notification_bindings=[events.binding()]) as session,
    ):
        await call_codex(session, events, "over stdio")
    log = (codex_home / "log/codex-rmcp.log").read_text()
    assert "INFO codex_mcp.codex: Codex app-server started" in log  # one session: no tag
    assert "TRACE codex_mcp.codex: app-server sent turn/completed" in log


def inspect(*args: str) -> Any:
    result = subprocess.run(
        [str(INSPECTOR), "--cli", *args], capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 0, result.stdout + result.stderr
    return json.loads(result.stdout)


CALL = ["--method", "tools/call", "--tool-name", "codex", "--tool-arg"]


@needs_inspector
async def test_the_inspector_calls_codex_over_stdio(
    codex_home: Path, fake_model: tuple[FakeProvider, int]
) -> None:
    provider, _ = fake_model
    provider.responder = fake.echo_prompt()
    # The Inspector passes a server only the variables it is given.
    env = [f"-e{key}={value}" for key, value in codex_env(codex_home).items()]
    called = await asyncio.to_thread(inspect, *env, *STDIO, *CALL, "prompt=from the inspector")
    assert called["structuredContent"]["content"] == "You said: from the inspector", called
    assert called["content"] == [{"type": "text", "text": "You said: from the inspector"}]


@needs_inspector
async def test_the_inspector_calls_codex_over_http(
    codex_http: HttpProcess, fake_model: tuple[FakeProvider, int]
) -> None:
    provider, _ = fake_model
    provider.responder = fake.echo_prompt()
    args = [codex_http.url, "--transport", "http", *CALL, "prompt=inspector over http"]
    called = await asyncio.to_thread(inspect, *args)
    assert called["structuredContent"]["content"] == "You said: inspector over http", called


def codex_calling_codex(body: dict[str, Any], number: int) -> list[fake.Item]:
    """The fake model for both Codexes: the outer one (which has our MCP server's tools)
    calls `codex`; the inner one (driven by our server) answers the prompt it got."""
    namespaces = {
        tool.get("name") for tool in body.get("tools", []) if tool.get("type") == "namespace"
    }
    if "mcp__codexmcp" not in namespaces:
        return fake.echo_prompt("Inner Codex says: ")(body, number)
    outputs = fake.function_outputs(body)
    if outputs:
        return [fake.message(f"The inner Codex answered: {outputs['call_codex']}", number)]
    item = fake.function_call("codex", {"prompt": "hello, inner Codex"}, "call_codex", number)
    item["namespace"] = "mcp__codexmcp"
    return [item]


async def test_codex_calls_codex_through_our_codex_tool(
    codex_http: HttpProcess, fake_model: tuple[FakeProvider, int], tmp_path: Path
) -> None:
    provider, port = fake_model
    provider.responder = codex_calling_codex
    outer_home = tmp_path / "outer-home"
    write_codex_home(outer_home, port)
    config = (outer_home / "config.toml").read_text()
    (outer_home / "config.toml").write_text(
        'approval_policy = "never"\nsandbox_mode = "danger-full-access"\n'
        + config
        + f'\n[mcp_servers.codexmcp]\nurl = "{codex_http.url}"\nrequired = true\n'
        "tool_timeout_sec = 120\n"
    )
    process = await asyncio.create_subprocess_exec(
        str(CODEX), "exec", "--strict-config", "--skip-git-repo-check", "Ask the inner Codex",
        cwd=tmp_path,
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.STDOUT,
        env={**os.environ, **codex_env(outer_home)},
    )  # fmt: skip
    output, _ = await asyncio.wait_for(process.communicate(), 120)
    assert process.returncode == 0, output.decode()
    [tool_output] = provider.tool_outputs()
    assert "Inner Codex says: hello, inner Codex" in str(tool_output), (tool_output, output)
    assert "threadId" in str(tool_output)
    assert "The inner Codex answered" in output.decode()


async def test_sigterm_stops_every_sessions_app_server(
    codex_http: HttpProcess, codex_home: Path, fake_model: tuple[FakeProvider, int]
) -> None:
    provider, _ = fake_model
    provider.responder = fake.echo_prompt()
    async with Client.http(codex_http.url) as client:
        result = await client.call_tool("codex", {"prompt": "then stop"}, timeout=60, retries=0)
        assert result.text == "You said: then stop"
        log = (codex_home / "log/codex-rmcp.log").read_text()
        [pid] = map(int, re.findall(r"Codex app-server started \(pid (\d+)\)", log))
        assert group(pid)
        codex_http.process.terminate()  # the session is still open
        assert await asyncio.to_thread(codex_http.process.wait, 30) == 0
    await group_ends(pid, timeout=5)  # killed with the server; gone in a moment
    assert (
        f"Codex app-server stopped (pid {pid})" in (codex_home / "log/codex-rmcp.log").read_text()
    )
