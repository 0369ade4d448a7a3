"""Every kind of 2026-07-28 result we produce, parsed by the real Codex (0.171, its stdio
opt-in: `features.mcp_2026_07_28` and the entry's CODEX_MCP_PROTOCOL_VERSION marker).
Codex parses 2026 results strictly: one field it does not accept fails the whole server
or the call. A wiretap between Codex and the server records both directions, so each test
can tell what we sent and what Codex did next; the fake model records what Codex handed
it (the tools offered, each tool's output)."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import shutil
import sys
from collections.abc import AsyncIterator
from dataclasses import dataclass
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
SERVERS = Path(__file__).parent / "servers"
KINDS = str(SERVERS / "codex_kinds.py")
NAMESPACE = "mcp__kinds"

pytestmark = [
    pytest.mark.interop,
    pytest.mark.skipif(not CODEX.exists(), reason="run .ci/node-tools.sh to install the Codex CLI"),
    pytest.mark.skipif(shutil.which("node") is None, reason="node is not on PATH"),
]


def calls_in_turn(*calls: tuple[str, dict[str, Any]]) -> Any:
    """A responder calling each (tool, arguments) of the server in turn, one per model
    request, then saying "Done."."""

    def respond(body: dict[str, Any], number: int) -> list[Item]:
        done = len(function_outputs(body))
        if done >= len(calls):
            return [message("Done.", number)]
        name, arguments = calls[done]
        item = function_call(name, arguments, f"call_{done + 1}", number)
        item["namespace"] = NAMESPACE
        return [item]

    return respond


@dataclass
class Wire:
    """What passed between Codex and the server, in order."""

    sent: list[dict[str, Any]]  # by Codex
    answered: list[dict[str, Any]]  # by the server
    lines: list[tuple[str, dict[str, Any]]]

    @classmethod
    def read(cls, path: Path) -> Wire:
        lines = []
        for raw in path.read_text().splitlines():
            mark, _, text = raw.partition(" ")
            lines.append((mark, json.loads(text)))
        return cls([m for d, m in lines if d == ">"], [m for d, m in lines if d == "<"], lines)

    def methods(self) -> list[str]:
        return [m["method"] for m in self.sent if "method" in m]

    def result_of(self, method: str, *, nth: int = 0) -> dict[str, Any]:
        ids = [m["id"] for m in self.sent if m.get("method") == method and "id" in m]
        answers = {m.get("id"): m for m in self.answered if "id" in m}
        return answers[ids[nth]]


def write_home(home: Path, port: int, command: list[str], wire: Path) -> None:
    """A CODEX_HOME whose one server, opted in to 2026-07-28, runs behind the wiretap."""
    home.mkdir(parents=True)
    args = [str(SERVERS / "codex_wiretap.py"), str(wire), "--", *command]
    (home / "config.toml").write_text(
        codex_config(
            port,
            top='approval_policy = "never"\nsandbox_mode = "danger-full-access"\n',
            tables=f"""
[features]
mcp_2026_07_28 = true

[mcp_servers.kinds]
command = {json.dumps(sys.executable)}
args = {json.dumps(args)}
required = true
env = {{ CODEX_MCP_PROTOCOL_VERSION = "2026-07-28" }}
""",
        )
    )


@contextlib.asynccontextmanager
async def fake_model(*calls: tuple[str, dict[str, Any]]) -> AsyncIterator[tuple[FakeProvider, int]]:
    model = FakeProvider(calls_in_turn(*calls))
    runner = web.AppRunner(model.app)
    await runner.setup()
    port = free_port()
    await web.TCPSite(runner, "127.0.0.1", port).start()
    try:
        yield model, port
    finally:
        await runner.cleanup()


async def run_codex(
    tmp_path: Path, command: list[str], *calls: tuple[str, dict[str, Any]]
) -> tuple[FakeProvider, Wire, str]:
    """`codex exec` making `calls`: the model, the wire, Codex's output."""
    home, wire = tmp_path / "codex-home", tmp_path / "wire.log"
    async with fake_model(*calls) as (model, port):
        write_home(home, port, command, wire)
        process = await asyncio.create_subprocess_exec(
            str(CODEX), "exec", "--strict-config", "--skip-git-repo-check", "Use the tools",
            cwd=tmp_path,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.STDOUT,
            env={**os.environ, "CODEX_HOME": str(home), "FAKE_PROVIDER_KEY": "not-a-real-key"},
        )  # fmt: skip
        output, _ = await asyncio.wait_for(process.communicate(), 180)
        text = output.decode(errors="replace")
        assert process.returncode == 0, text
        return model, Wire.read(wire), text


SERVE_KINDS = [sys.executable, str(ROOT / "cmd/mcp"), "--serve", KINDS]
GATEWAY = [sys.executable, str(ROOT / "cmd/mcp"), "--", *SERVE_KINDS]
TASKS = "io.modelcontextprotocol/tasks"


def output_texts(model: FakeProvider) -> list[str]:
    """Each tool output the model got, once, as its text parts joined."""
    texts: dict[str, None] = {}
    for output in model.tool_outputs():
        parts = output if isinstance(output, list) else [{"text": str(output)}]
        texts["\n".join(str(p.get("text", "")) for p in parts)] = None
    return list(texts)


def assert_cache_hints(result: dict[str, Any], what: str, front: str) -> None:
    """The server's own hints (60 s, public); the gateway's are its own (it does not pass a
    child's on: its listing merges several), in the two scopes Codex accepts."""
    assert result.get("resultType") == "complete", (what, result)
    hints = (result.get("ttlMs"), result.get("cacheScope"))
    if front == "server":
        assert hints == (60_000, "public"), (what, result)
    else:
        assert type(hints[0]) is int and hints[0] >= 0 and hints[1] in ("public", "private")


@pytest.mark.slow
@pytest.mark.parametrize("front", ["server", "gateway"])
async def test_codex_accepts_every_kind_of_2026_result(tmp_path: Path, front: str) -> None:
    """discover and tools/list with cache hints, a plain call, an input-required round and
    a task-capable tool, each as Codex 0.171 takes it: it lists and calls on (a result it
    rejects fails the server or the call, and the model never gets the output)."""
    model, wire, output = await run_codex(
        tmp_path,
        SERVE_KINDS if front == "server" else GATEWAY,
        ("echo", {"message": "hi"}),
        ("ask_name", {}),
        ("slow_report", {"seconds": 0.2}),
    )
    methods = wire.methods()
    assert methods[0] == "server/discover" and "initialize" not in methods, methods
    assert_cache_hints(wire.result_of("server/discover")["result"], "discover", front)
    assert_cache_hints(wire.result_of("tools/list")["result"], "tools/list", front)
    # Codex names a server or call it rejected: "MCP client for `kinds` failed to start",
    # "mcp: kinds/echo (failed)".
    failures = [
        line for line in output.splitlines() if "failed" in line.lower() and "kinds" in line
    ]
    assert not failures, output
    offered = model.tool_namespaces().get(NAMESPACE, [])
    assert {"echo", "ask_name", "slow_report"} <= set(offered), (offered, output)
    texts = output_texts(model)
    # The plain call.
    assert "echo: hi" in texts[0], texts
    # The input-required round: Codex answered the question (`codex exec` declines
    # elicitation; the round is what is tested) by calling again with its answer and
    # our requestState, and the model got the tool's answer to that.
    asked = wire.result_of("tools/call", nth=1)["result"]
    assert asked["resultType"] == "input_required", asked
    [(key, question)] = asked["inputRequests"].items()  # the gateway names it its own way
    assert question["method"] == "elicitation/create", question
    retry = [m for m in wire.sent if m.get("method") == "tools/call"][2]["params"]
    assert retry["requestState"] == asked["requestState"], retry
    assert retry["inputResponses"][key]["action"] in ("accept", "decline", "cancel"), retry
    assert any("Output:\nasked: action=" in t for t in texts), texts
    # The task: Codex 0.171 does not declare the tasks extension, so the call is answered
    # in place; no result of ours was a task.
    for request in wire.sent:
        capabilities = (
            request.get("params", {})
            .get("_meta", {})
            .get("io.modelcontextprotocol/clientCapabilities", {})
        )
        assert TASKS not in capabilities.get("extensions", {}), capabilities
    assert not [a for a in wire.answered if a.get("result", {}).get("resultType") == "task"]
    assert any("Output:\nreported after 0.2 s" in t for t in texts), texts


@pytest.mark.slow
@pytest.mark.parametrize("front", ["server", "gateway"])
async def test_codex_app_server_answers_an_input_required_round(tmp_path: Path, front: str) -> None:
    """Where Codex can answer (its app-server puts the question to its client as
    `mcpServer/elicitation/request`): the answer comes back in Codex's retry of the call,
    and the tool gets it."""
    asked: list[dict[str, Any]] = []

    async def answer(request: dict[str, Any]) -> dict[str, Any]:
        asked.append(request)
        if request.get("message") != "What is your name?":
            return {"action": "accept"}  # Codex's own approval of the tool call, if it asks
        return {"action": "accept", "content": {"name": "Ada"}}

    home, wire_log, work = tmp_path / "codex-home", tmp_path / "wire.log", tmp_path / "work"
    work.mkdir()
    async with fake_model(("ask_name", {})) as (model, port):
        write_home(home, port, SERVE_KINDS if front == "server" else GATEWAY, wire_log)
        env = {"CODEX_HOME": str(home), "FAKE_PROVIDER_KEY": "not-a-real-key"}
        driver = await CodexDriver.spawn(env={**env, "CODEX_BIN": str(CODEX)}, cwd=str(work))
        try:
            # "never" declines every elicitation inside Codex: the client is never asked.
            options = ThreadOptions(cwd=str(work), approval_policy="on-request")
            result = await asyncio.wait_for(driver.codex("Ask me", options, elicit=answer), 120)
        finally:
            await driver.close()
    assert result.content == "Done.", result
    assert "What is your name?" in [a.get("message") for a in asked], asked
    wire = Wire.read(wire_log)
    question = wire.result_of("tools/call")["result"]
    assert question["resultType"] == "input_required", question
    [key] = question["inputRequests"]
    retry = [m for m in wire.sent if m.get("method") == "tools/call"][1]["params"]
    assert retry["requestState"] == question["requestState"], retry
    assert retry["inputResponses"][key] == {"action": "accept", "content": {"name": "Ada"}}
    assert any("asked: action=accept content={'name': 'Ada'}" in t for t in output_texts(model))
