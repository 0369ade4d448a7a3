"""Callers written for the removed `codex mcp-server`: the old elicitation fields on the
wire, the old `{"decision": ...}` reply, odd replies, and cancelling a running call. Our
own client over stdio, so the raw messages are visible."""

from __future__ import annotations

import asyncio
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from codex_mcp.client import Client
from codex_mcp.core.errors import McpError
from codex_mcp.core.jsonrpc import JsonObject
from interop import fake_responses_provider as fake
from interop.fake_responses_provider import FakeProvider

from .conftest import ROOT, codex_env, needs_codex

pytestmark = [pytest.mark.interop, needs_codex]
SERVER = Path(__file__).parent / "servers/codex_server.py"
ASK = {"approval-policy": "on-request", "sandbox": "read-only"}


def codex_client(codex_home: Path, workdir: Path, **options: Any) -> Client:
    return Client.stdio(
        [sys.executable, str(ROOT / "cmd/mcp"), "--serve", str(SERVER)],
        env=codex_env(codex_home),
        cwd=workdir,
        **options,
    )


async def test_old_fields_go_out_and_an_old_decision_reply_approves(
    codex_home: Path, workdir: Path, fake_model: tuple[FakeProvider, int]
) -> None:
    provider, _ = fake_model
    provider.responder = fake.run_command("echo old > old.txt")
    asked: list[JsonObject] = []

    def old_style(params: JsonObject) -> JsonObject:
        asked.append(params)
        return {"decision": "approved"}

    async with codex_client(codex_home, workdir, elicitation_handler=old_style) as client:
        result = await client.call_tool(
            "codex", {"prompt": "go", "cwd": str(workdir), **ASK}, timeout=60, retries=0
        )
    assert not result.is_error, result.text
    assert (workdir / "old.txt").read_text() == "old\n"
    [params] = asked
    thread_id = result.structured_content["threadId"]  # type: ignore[index]
    assert params["threadId"] == thread_id
    assert params["codex_elicitation"] == "exec-approval"
    assert params["codex_command"] == ["/bin/bash", "-lc", "echo old > old.txt"]
    assert params["codex_cwd"] == str(workdir)
    assert params["codex_mcp_tool_call_id"].isdigit()  # the tools/call request id
    assert params["requestedSchema"] == {"type": "object", "properties": {}}


def fail(_params: JsonObject) -> JsonObject:
    raise McpError(-32000, "the approval UI crashed")


@pytest.mark.parametrize(
    ("handler", "why"),
    [
        (lambda _p: {"decision": "denied"}, "the client declined"),
        (lambda _p: {"whatever": 1}, "the client declined"),
        (lambda _p: {"action": "maybe"}, "the client declined"),
        (fail, "could not be asked (the approval UI crashed)"),
    ],
    ids=["old-denied", "unexpected-object", "unknown-action", "error-response"],
)
async def test_an_odd_reply_is_a_refusal_not_a_hang(
    codex_home: Path,
    workdir: Path,
    fake_model: tuple[FakeProvider, int],
    handler: Any,
    why: str,
) -> None:
    provider, _ = fake_model
    provider.responder = fake.run_command("echo odd > odd.txt")
    async with codex_client(codex_home, workdir, elicitation_handler=handler) as client:
        result = await client.call_tool(
            "codex", {"prompt": "go", "cwd": str(workdir), **ASK}, timeout=60, retries=0
        )
    assert result.is_error
    assert why in result.text
    assert not (workdir / "odd.txt").exists()


async def test_cancelling_a_call_interrupts_codex_and_the_server_keeps_serving(
    codex_home: Path, workdir: Path, fake_model: tuple[FakeProvider, int]
) -> None:
    provider, _ = fake_model
    provider.responder = fake.stall()
    threads: set[str] = set()

    def on_notification(method: str, params: JsonObject) -> None:
        if method == "codex/event":
            threads.add(params["_meta"]["threadId"])

    async with codex_client(codex_home, workdir, on_notification=on_notification) as client:
        call = asyncio.create_task(
            client.call_tool("codex", {"prompt": "never ends"}, timeout=None, retries=0)
        )
        await asyncio.wait_for(provider.stalled.wait(), 60)
        call.cancel()  # our client sends notifications/cancelled for it
        with pytest.raises(asyncio.CancelledError):
            await call
        [thread_id] = threads
        provider.responder = fake.echo_prompt()
        # The thread is usable again only once its stalled turn was interrupted.
        started = time.monotonic()
        result = await client.call_tool(
            "codex-reply", {"prompt": "next", "threadId": thread_id}, timeout=60, retries=0
        )
        assert result.structured_content == {"threadId": thread_id, "content": "You said: next"}
        assert time.monotonic() - started < 5


async def test_bad_arguments_and_unknown_threads_are_error_results(
    codex_home: Path, workdir: Path
) -> None:
    async with codex_client(codex_home, workdir) as client:
        bad = await client.call_tool("codex", {"prompt": 1}, retries=0)
        assert bad.is_error and "argument 'prompt' must be a string" in bad.text
        unknown = await client.call_tool(
            "codex-reply", {"prompt": "x", "threadId": "t-1"}, retries=0
        )
        assert unknown.is_error and "Session not found for thread_id: t-1" in unknown.text
        assert unknown.structured_content == {
            "threadId": "t-1",
            "content": "Session not found for thread_id: t-1",
        }
