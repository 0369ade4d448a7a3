"""doctor's prediction against what the real Codex 0.171 showed the model, on the same
config.toml: a 2026-07-28-only server under the opt-in, a tool name listed twice, a tool
without readOnlyHint under the full-access sandbox (in config.toml, and in a `--profile`
file); and what Codex says to a server (its `initialize`) and the environment it gives a
stdio server, against what doctor and lint do. Codex runs offline (`codex exec`) against the
fake model on 127.0.0.1, which records the tools Codex offered it and each tool's output."""

from __future__ import annotations

import asyncio
import io
import json
import os
import shutil
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web
from codex_mcp.codex_compat.policy import REFUSAL
from codex_mcp.doctor.codex_launch import server_environment
from codex_mcp.lint.cli import main as lint
from gateway.codex_harness import CODEX, FakeModel, ToolCall
from interop.fake_responses_provider import codex_config
from support.processes import free_port

from .doctor_helpers import BROKEN_SERVER, PY, doctor, toml_list, toml_string

ROOT = Path(__file__).resolve().parents[2]
STATELESS_ONLY = str(ROOT / "tests/gateway/servers/stateless_only.py")
WIRETAP = str(ROOT / "tests/interop/servers/codex_wiretap.py")
OPT_IN = "[features]\nmcp_2026_07_28 = true\n"
MARKER = 'env = { CODEX_MCP_PROTOCOL_VERSION = "2026-07-28" }\n'

pytestmark = [
    pytest.mark.interop,
    pytest.mark.slow,
    pytest.mark.skipif(not CODEX.exists(), reason="run .ci/node-tools.sh to install the Codex CLI"),
    pytest.mark.skipif(shutil.which("node") is None, reason="node is not on PATH"),
]


@dataclass
class Seen:
    """What Codex offered the model, per namespace and tool, and the tools' outputs; and
    doctor's --json on the same config (with the same --profile)."""

    offered: dict[str, dict[str, dict[str, Any]]]
    outputs: list[Any]
    output: str
    doctor: dict[str, Any]


def entry(name: str, *args: str, extra: str = "") -> str:
    return (
        f"[mcp_servers.{name}]\ncommand = {toml_string(PY)}\nargs = {toml_list(list(args))}\n"
        f"required = true\n{extra}"
    )


async def codex_and_doctor(
    tmp_path: Path,
    tables: str,
    *,
    top: str = "",
    call: ToolCall | None = None,
    profile: tuple[str, str] | None = None,
) -> Seen:
    """`codex exec` with `top` and `tables` in its config.toml (and `profile`: a name and
    its NAME.config.toml), then `codex-mcp doctor` on the same files."""
    home = tmp_path / "codex-home"
    home.mkdir()
    model = FakeModel(call)
    runner = web.AppRunner(model.app)
    await runner.setup()
    port = free_port()
    await web.TCPSite(runner, "127.0.0.1", port).start()
    (home / "config.toml").write_text(codex_config(port, top=top, tables=tables))
    options: list[str] = []
    if profile is not None:
        (home / f"{profile[0]}.config.toml").write_text(profile[1])
        options = ["--profile", profile[0]]
    try:
        process = await asyncio.create_subprocess_exec(
            str(CODEX), *options, "exec", "--strict-config", "--skip-git-repo-check", "Go",
            cwd=tmp_path,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.STDOUT,
            env={**os.environ, "CODEX_HOME": str(home), "FAKE_PROVIDER_KEY": "not-a-real-key"},
        )  # fmt: skip
        output, _ = await asyncio.wait_for(process.communicate(), 180)
    finally:
        await runner.cleanup()
    ran = doctor(tmp_path, "--config", str(home / "config.toml"), "--json", *options)
    assert ran.code in (0, 1), ran.err
    text = output.decode(errors="replace")
    assert model.requests, text
    return Seen(model.offered_tools(), model.tool_outputs(), text, ran.json())


def predicted(document: dict[str, Any]) -> dict[str, set[str]]:
    """doctor's prediction: namespace -> the names the model sees."""
    shown: dict[str, set[str]] = {}
    for server in document["servers"]:
        for tool in server["tools"]:
            if tool["codexName"]:
                namespace, _, name = tool["codexName"].rpartition("__")
                shown.setdefault(namespace, set()).add(name)
    return shown


def offered(seen: Seen) -> dict[str, set[str]]:
    """What Codex offered of MCP servers (its own namespaces, multi_agent_v1..., left out)."""
    return {ns: set(tools) for ns, tools in seen.offered.items() if ns.startswith("mcp__")}


async def test_a_2026_only_server_opted_in(tmp_path: Path) -> None:
    seen = await codex_and_doctor(tmp_path, OPT_IN + entry("modern", STATELESS_ONLY, extra=MARKER))
    assert "add" in offered(seen).get("mcp__modern", set()), seen.output
    assert predicted(seen.doctor) == offered(seen)
    assert seen.doctor["exitCode"] == 0


async def test_a_name_listed_twice(tmp_path: Path) -> None:
    first = {
        "name": "twice",
        "description": "the first twice",
        "inputSchema": {"type": "object", "properties": {"a": {"type": "string"}}},
        "annotations": {"readOnlyHint": True},
    }
    second = {**first, "description": "the second twice", "inputSchema": {"type": "object"}}
    args = ["--tools", "echo", "--custom-tools", json.dumps([first, second])]
    seen = await codex_and_doctor(tmp_path, entry("brk", BROKEN_SERVER, *args))
    tools = seen.offered["mcp__brk"]
    assert tools["twice"]["description"] == "the first twice", tools["twice"]
    assert predicted(seen.doctor) == offered(seen)
    (server,) = seen.doctor["servers"]
    assert [t["status"] for t in server["tools"] if t["tool"] == "twice"] == ["kept"]
    assert seen.doctor["exitCode"] == 0


@pytest.mark.parametrize("where", ["config.toml", "profile"])
async def test_full_access_runs_a_tool_without_read_only_hint(tmp_path: Path, where: str) -> None:
    full = 'sandbox_mode = "danger-full-access"\n'
    seen = await codex_and_doctor(
        tmp_path,
        entry("brk", BROKEN_SERVER, "--tools", "echo,no_annotations"),
        top=full if where == "config.toml" else "",
        profile=("yolo", full) if where == "profile" else None,
        call=ToolCall("mcp__brk", "no_annotations", {}),
    )
    (result,) = seen.outputs
    assert REFUSAL not in json.dumps(result), seen.output  # Codex ran it
    (server,) = seen.doctor["servers"]
    (approval,) = [f for f in server["findings"] if f["rule"] == "needs-approval"]
    assert approval["severity"] == "info" and "runs it without asking" in approval["message"]
    assert predicted(seen.doctor) == offered(seen)


def _initialize_sent(wire: Path) -> dict[str, Any]:
    for line in wire.read_text().splitlines():
        mark, _, text = line.partition(" ")
        message = json.loads(text)
        if mark == ">" and message.get("method") == "initialize":
            params: dict[str, Any] = message["params"]
            return params
    raise AssertionError(f"no initialize in {wire.read_text()[:500]}")


async def test_lint_and_doctor_greet_a_server_as_codex_does(tmp_path: Path) -> None:
    wires = {name: tmp_path / f"{name}.log" for name in ("codex", "doctor", "lint")}
    server = [BROKEN_SERVER, "--tools", "echo"]
    await codex_and_doctor(tmp_path, entry("brk", WIRETAP, str(wires["codex"]), "--", PY, *server))
    # the doctor above wrote through the same wiretap to the same log: split it off
    lines = wires["codex"].read_text().splitlines()
    starts = [i for i, line in enumerate(lines) if '"method":"initialize"' in line]
    wires["codex"].write_text("\n".join(lines[: starts[1]]) + "\n")
    wires["doctor"].write_text("\n".join(lines[starts[1] :]) + "\n")
    argv = ["--name", "brk", "--", PY, WIRETAP, str(wires["lint"]), "--", PY, *server]
    await asyncio.to_thread(lint, argv, out=io.StringIO())
    codex = _initialize_sent(wires["codex"])
    assert codex["clientInfo"]["version"].startswith("0.171.")
    assert _initialize_sent(wires["doctor"]) == codex
    assert _initialize_sent(wires["lint"]) == codex


async def test_the_environment_codex_gives_a_stdio_server(tmp_path: Path) -> None:
    """Codex clears a stdio server's environment and passes on a fixed list (and the entry's
    env_vars and env): doctor starts servers with the same, so a command Codex cannot find,
    or a CA bundle Codex does not pass, is found out."""
    dump = tmp_path / "env.json"
    script = f"import json, os, sys; json.dump(dict(os.environ), open({str(dump)!r}, 'w')); sys.stdin.read()"
    environ = {**os.environ, "DOCTOR_TEST_PASSED": "1", "DOCTOR_TEST_NOT_PASSED": "1"}
    # required, with a short timeout: Codex waits (the script never answers) until it gave up
    extra = (
        'env_vars = ["DOCTOR_TEST_PASSED"]\nenv = { FROM_ENTRY = "x" }\n'
        "required = true\nstartup_timeout_sec = 3\n"
    )
    text = f"[mcp_servers.dump]\ncommand = {toml_string(PY)}\nargs = {toml_list(['-c', script])}\n{extra}"
    home = tmp_path / "codex-home"
    home.mkdir()
    (home / "config.toml").write_text(codex_config(free_port(), tables=text, retries=False))
    process = await asyncio.create_subprocess_exec(
        str(CODEX), "exec", "--skip-git-repo-check", "Go", cwd=tmp_path,
        stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.DEVNULL,
        stderr=asyncio.subprocess.DEVNULL,
        env={**environ, "CODEX_HOME": str(home), "FAKE_PROVIDER_KEY": "x"},
    )  # fmt: skip
    await asyncio.wait_for(process.wait(), 120)
    given = json.loads(dump.read_text())
    expected = server_environment(
        environ, environ["PATH"], ["DOCTOR_TEST_PASSED"], {"FROM_ENTRY": "x"}
    )
    assert set(given) == set(expected), (sorted(set(given) ^ set(expected)), sys.platform)
