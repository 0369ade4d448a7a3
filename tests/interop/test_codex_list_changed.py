"""The real Codex with `features.mcp_tool_list_changed`: it re-lists tools on
`notifications/tools/list_changed`. Its app-server was seen to leave a tool call
unanswered when the notification came right behind the call's result (issue 32); ours
is debounced and written apart from any answer (internal/mcp/list_changed.py). A tool
whose every call adds a tool, called CALLS times a run, RUNS runs: every call is answered
and the model is offered the tools the calls added."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import re
import shutil
import sys
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web
from codex_mcp.codex.driver import CodexDriver
from codex_mcp.codex.protocol import ThreadOptions
from support.processes import free_port

from .fake_responses_provider import (
    FakeProvider,
    Item,
    codex_config,
    function_call,
    function_outputs,
    message,
)

ROOT = Path(__file__).resolve().parents[2]
CODEX = ROOT / ".tools/npm/node_modules/.bin/codex"
KINDS = str(Path(__file__).parent / "servers" / "codex_kinds.py")
NAMESPACE = "mcp__kinds"
RUNS = 10
CALLS = 10

pytestmark = [
    pytest.mark.interop,
    pytest.mark.slow,
    pytest.mark.skipif(not CODEX.exists(), reason="run .ci/node-tools.sh to install the Codex CLI"),
    pytest.mark.skipif(shutil.which("node") is None, reason="node is not on PATH"),
]


#: After the calls, how many times the model tries the tool the last call added, and how
#: long it waits before each try (Codex re-lists when the notification comes: a moment).
TRIES = 40
TRY_PAUSE = 0.25
NEWEST = f"added_{CALLS}"


def grow_then_call_the_newest(body: dict[str, Any], number: int) -> list[Item]:
    """Call `grow` CALLS times, one call per model request; then call the tool the last
    one added until it answers (or TRIES times); then say "Done."."""
    outputs = function_outputs(body)
    done = len(outputs)
    if done < CALLS:
        item = function_call("grow", {}, f"call_{done + 1}", number)
    elif done < CALLS + TRIES and not any(f"{NEWEST} answers" in str(o) for o in outputs.values()):
        item = function_call(NEWEST, {}, f"try_{done - CALLS + 1}", number)
    else:
        return [message("Done.", number)]
    item["namespace"] = NAMESPACE
    return [item]


class PacedModel(FakeProvider):
    """The fake model, pausing before each try of the newest tool."""

    def __init__(self) -> None:
        super().__init__(grow_then_call_the_newest)

    async def responses(self, request: web.Request) -> web.StreamResponse:
        if len(function_outputs(await request.json())) >= CALLS:
            await asyncio.sleep(TRY_PAUSE)
        return await super().responses(request)


def offered(body: dict[str, Any]) -> set[str]:
    return {
        inner["name"]
        for tool in body.get("tools", [])
        if tool.get("type") == "namespace" and tool.get("name") == NAMESPACE
        for inner in tool.get("tools", [])
    }


def write_home(home: Path, port: int, server: list[str]) -> None:
    home.mkdir(parents=True)
    entry = f"""
[features]
mcp_tool_list_changed = true

[mcp_servers.kinds]
command = {json.dumps(sys.executable)}
args = {json.dumps(server)}
required = true
tool_timeout_sec = 30
"""
    policy = 'approval_policy = "never"\nsandbox_mode = "danger-full-access"\n'
    (home / "config.toml").write_text(codex_config(port, top=policy, tables=entry))


@contextlib.asynccontextmanager
async def paced_model() -> AsyncIterator[tuple[PacedModel, int]]:
    model = PacedModel()
    runner = web.AppRunner(model.app)
    await runner.setup()
    port = free_port()
    await web.TCPSite(runner, "127.0.0.1", port).start()
    try:
        yield model, port
    finally:
        await runner.cleanup()


ENV = {"FAKE_PROVIDER_KEY": "not-a-real-key"}


async def exec_run(home: Path, server: list[str]) -> tuple[FakeProvider, str]:
    """One `codex exec`: a thread whose one turn makes the calls."""
    async with paced_model() as (model, port):
        write_home(home, port, server)
        process = await asyncio.create_subprocess_exec(
            str(CODEX), "exec", "--strict-config", "--skip-git-repo-check", "Grow the tools",
            cwd=home.parent,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.STDOUT,
            env={**os.environ, **ENV, "CODEX_HOME": str(home)},
        )  # fmt: skip
        try:
            output, _ = await asyncio.wait_for(process.communicate(), 240)
        except TimeoutError:
            process.kill()
            output, _ = await process.communicate()
        text = output.decode(errors="replace")
        assert process.returncode == 0, text
        return model, text


def assert_every_call_answered_and_the_tools_seen(model: FakeProvider, output: str) -> None:
    answers = function_outputs(model.requests[-1])
    for n in range(1, CALLS + 1):
        answer = answers.get(f"call_{n}")
        assert re.search(rf"grew added_{n}\b", str(answer)), (n, answer, output)
    # Codex re-listed on the notifications: the model is offered what the calls added, and
    # a call of the newest tool reaches it.
    assert any(f"{NEWEST} answers" in str(o) for o in answers.values()), (answers, output)
    seen = set().union(*(offered(body) for body in model.requests))
    assert {f"added_{n}" for n in range(1, CALLS + 1)} <= seen, (sorted(seen), output)


def front_command(front: str) -> list[str]:
    serve = [str(ROOT / "cmd/mcp"), "--serve", KINDS]
    return serve if front == "server" else [str(ROOT / "cmd/mcp"), "--", sys.executable, *serve]


def tries_of(model: FakeProvider) -> int:
    return sum(key.startswith("try_") for key in function_outputs(model.requests[-1]))


@pytest.mark.parametrize("front", ["server", "gateway"])
async def test_codex_exec_answers_every_call_while_the_tool_list_changes(
    tmp_path: Path, front: str
) -> None:
    """`codex exec`, a process per run."""
    started = time.monotonic()
    tries = []
    for run in range(RUNS):
        model, output = await exec_run(tmp_path / f"run-{run}" / "home", front_command(front))
        assert_every_call_answered_and_the_tools_seen(model, output)
        tries.append(tries_of(model))
    took = time.monotonic() - started
    print(f"exec, {front}: {RUNS} runs of {CALLS} calls in {took:.1f} s; tries: {tries}")


@pytest.mark.parametrize("front", ["server", "gateway"])
async def test_codex_app_server_answers_every_call_while_the_tool_list_changes(
    tmp_path: Path, front: str
) -> None:
    """The app-server (where a call was seen unanswered): one app-server, a thread per run,
    each thread with its own server process."""
    started = time.monotonic()
    tries = []
    work = tmp_path / "work"
    work.mkdir()
    home = tmp_path / "home"
    async with paced_model() as (model, port):
        write_home(home, port, front_command(front))
        driver = await CodexDriver.spawn(
            env={**ENV, "CODEX_HOME": str(home), "CODEX_BIN": str(CODEX)}, cwd=str(work)
        )
        try:
            for _ in range(RUNS):
                model.requests.clear()
                options = ThreadOptions(cwd=str(work), approval_policy="never")
                result = await asyncio.wait_for(driver.codex("Grow the tools", options), 120)
                assert result.content == "Done.", result
                assert_every_call_answered_and_the_tools_seen(model, driver.gone or "")
                tries.append(tries_of(model))
        finally:
            await driver.close()
    took = time.monotonic() - started
    print(f"app-server, {front}: {RUNS} runs of {CALLS} calls in {took:.1f} s; tries: {tries}")
