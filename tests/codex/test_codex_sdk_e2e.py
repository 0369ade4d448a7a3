"""End to end: the official MCP Python SDK calls `codex` over stdio on our server, which
drives the real Codex app-server against the fake model."""

from __future__ import annotations

import os
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest
from interop import fake_responses_provider as fake
from interop.fake_responses_provider import FakeProvider
from mcp import ClientSession, types
from mcp.client.extension import NotificationBinding
from mcp.client.stdio import StdioServerParameters, stdio_client
from pydantic import BaseModel, ConfigDict

from .conftest import ROOT, codex_env, needs_codex

pytestmark = [pytest.mark.interop, needs_codex]
SERVER = Path(__file__).parent / "servers/codex_server.py"


class CodexEventParams(BaseModel):
    model_config = ConfigDict(extra="allow")


@asynccontextmanager
async def connect(
    codex_home: Path, workdir: Path, **callbacks: Any
) -> AsyncIterator[tuple[ClientSession, list[dict[str, Any]]]]:
    events: list[dict[str, Any]] = []

    async def on_event(params: CodexEventParams) -> None:
        events.append(params.model_dump())

    params = StdioServerParameters(
        command=sys.executable,
        args=[str(ROOT / "cmd/mcp"), "--serve", str(SERVER)],
        env={**os.environ, **codex_env(codex_home)},
        cwd=str(workdir),
    )
    binding = NotificationBinding(
        method="codex/event", params_type=CodexEventParams, handler=on_event
    )
    async with (
        stdio_client(params) as (read, write),
        ClientSession(read, write, notification_bindings=[binding], **callbacks) as session,
    ):
        with anyio.fail_after(30):
            await session.initialize()
        yield session, events


async def test_the_sdk_calls_codex_then_codex_reply(
    codex_home: Path, workdir: Path, fake_model: tuple[FakeProvider, int]
) -> None:
    provider, _ = fake_model
    provider.responder = fake.echo_prompt()
    progress: list[float] = []

    async def on_progress(value: float, total: float | None, message: str | None) -> None:
        progress.append(value)

    async with connect(codex_home, workdir) as (session, events):
        listed = {tool.name: tool for tool in (await session.list_tools()).tools}
        assert set(listed) == {"codex", "codex-reply"}
        assert listed["codex"].output_schema is not None
        with anyio.fail_after(60):
            first = await session.call_tool(
                "codex", {"prompt": "hello codex"}, progress_callback=on_progress
            )
        assert not first.is_error, first
        assert first.structured_content is not None
        thread_id = first.structured_content["threadId"]
        assert first.structured_content["content"] == "You said: hello codex"
        assert first.content[0].text == "You said: hello codex"  # type: ignore[union-attr]
        with anyio.fail_after(60):
            second = await session.call_tool(
                "codex-reply", {"threadId": thread_id, "prompt": "and again"}
            )
        assert second.structured_content == {
            "threadId": thread_id,
            "content": "You said: and again",
        }
        assert fake.user_texts(provider.requests[-1]) == ["hello codex", "and again"]
        assert progress and progress == sorted(progress)
        with anyio.fail_after(10):
            while not any(e["msg"]["type"] == "task_complete" for e in events[1:]):
                await anyio.sleep(0.01)
        assert {e["_meta"]["threadId"] for e in events} == {thread_id}
        assert events[0]["msg"]["type"] == "session_configured"
        request_ids = [e["_meta"]["requestId"] for e in events]
        assert len(set(request_ids)) == 2  # one per tools/call


async def test_the_sdk_approves_and_declines_commands_by_elicitation(
    codex_home: Path, workdir: Path, fake_model: tuple[FakeProvider, int]
) -> None:
    provider, _ = fake_model
    answers = ["accept", "decline"]
    asked: list[dict[str, Any]] = []

    async def on_elicit(context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        asked.append(params.model_dump(by_alias=True))
        return types.ElicitResult(action=answers.pop(0))  # type: ignore[arg-type]

    arguments = {"approval-policy": "on-request", "sandbox": "read-only", "cwd": str(workdir)}
    async with connect(codex_home, workdir, elicitation_callback=on_elicit) as (session, _):
        provider.responder = fake.run_command("echo yes > accepted.txt")
        with anyio.fail_after(60):
            accepted = await session.call_tool("codex", {"prompt": "go", **arguments})
        assert not accepted.is_error, accepted
        assert (workdir / "accepted.txt").read_text() == "yes\n"

        provider.responder = fake.run_command("echo no > declined.txt")
        with anyio.fail_after(60):
            declined = await session.call_tool("codex", {"prompt": "go", **arguments})
        assert declined.is_error
        assert "the client declined" in declined.content[0].text  # type: ignore[union-attr]
        assert not (workdir / "declined.txt").exists()

    # (The SDK keeps only the standard fields; test_codex_old_callers reads the old ones.)
    assert len(asked) == 2
    assert "echo yes > accepted.txt" in asked[0]["message"]
    assert f"in `{workdir}`" in asked[0]["message"]


async def test_a_client_without_elicitation_gets_an_error_not_a_hang(
    codex_home: Path, workdir: Path, fake_model: tuple[FakeProvider, int]
) -> None:
    provider, _ = fake_model
    provider.responder = fake.run_command("echo no > nobody.txt")
    arguments = {"approval-policy": "on-request", "sandbox": "read-only", "cwd": str(workdir)}
    async with connect(codex_home, workdir) as (session, _):
        with anyio.fail_after(60):
            result = await session.call_tool("codex", {"prompt": "go", **arguments})
    assert result.is_error
    assert "elicitation capability" in result.content[0].text  # type: ignore[union-attr]
    assert not (workdir / "nobody.txt").exists()


def codex_home_with_notes(tmp_path: Path, port: int) -> tuple[Path, Path]:
    """A CODEX_HOME whose Codex has an MCP server of its own, `notes` (servers/
    notes_server.py), and the file its tool writes to."""
    notes = tmp_path / "notes.txt"
    home = tmp_path / "codex-home-with-notes"
    home.mkdir()
    server = Path(__file__).parent / "servers/notes_server.py"
    (home / "config.toml").write_text(
        fake.codex_config(
            port,
            retries=False,
            tables=f"""
[mcp_servers.notes]
command = "{sys.executable}"
args = ["{ROOT / "cmd/mcp"}", "--serve", "{server}"]
env = {{ NOTES_FILE = "{notes}" }}
""",
        )
    )
    return home, notes


async def test_codex_asks_the_sdk_before_running_its_own_mcp_servers_tool(
    tmp_path: Path, workdir: Path, fake_model: tuple[FakeProvider, int]
) -> None:
    """Codex puts the approval of a tool call to one of its own MCP servers to app-server's
    client as `mcpServer/elicitation/request`: we put it to our caller as elicitation (it
    was declined unasked, so the tool never ran), and its answer decides."""
    provider, port = fake_model
    home, notes = codex_home_with_notes(tmp_path, port)
    provider.responder = fake.call_tool("mcp__notes", "write_note", {"text": "kept"})
    answers = ["accept", "decline"]
    asked: list[dict[str, Any]] = []

    async def on_elicit(context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        asked.append(params.model_dump(by_alias=True))
        return types.ElicitResult(action=answers.pop(0), content={})  # type: ignore[arg-type]

    async with connect(home, workdir, elicitation_callback=on_elicit) as (session, _):
        with anyio.fail_after(60):
            accepted = await session.call_tool("codex", {"prompt": "note it"})
        assert not accepted.is_error, accepted
        assert notes.read_text() == "kept\n"
        assert "noted: kept" in str(provider.tool_outputs()[-1])

        provider.responder = fake.call_tool("mcp__notes", "write_note", {"text": "refused"})
        with anyio.fail_after(60):
            declined = await session.call_tool("codex", {"prompt": "note it again"})
        assert not declined.is_error, declined  # the turn goes on: the model hears "rejected"
        assert notes.read_text() == "kept\n"
        assert "rejected" in str(provider.tool_outputs()[-1])

    assert len(asked) == 2
    assert asked[0]["message"] == 'Allow the notes MCP server to run tool "write_note"?'
    assert asked[0]["requestedSchema"] == {"type": "object", "properties": {}}


async def test_codex_mcp_tool_approval_is_declined_for_a_caller_that_cannot_be_asked(
    tmp_path: Path, workdir: Path, fake_model: tuple[FakeProvider, int]
) -> None:
    """A caller without elicitation: the approval is declined at once (no hang), the turn
    goes on and the tool does not run."""
    provider, port = fake_model
    home, notes = codex_home_with_notes(tmp_path, port)
    provider.responder = fake.call_tool("mcp__notes", "write_note", {"text": "unasked"})
    async with connect(home, workdir) as (session, _):
        with anyio.fail_after(60):
            result = await session.call_tool("codex", {"prompt": "note it"})
    assert not result.is_error, result
    assert not notes.exists()
    assert "rejected" in str(provider.tool_outputs()[-1])
