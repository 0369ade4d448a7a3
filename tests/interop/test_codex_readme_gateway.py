"""The README's gateway example under the real Codex, started as a user starts it: with a
PATH that does not have the virtualenv (activation is the shell's; Codex passes its own PATH
to the gateway, and the gateway to its children). As the README writes it (the time
server's absolute path, where `pipx install` puts it; here the virtualenv's) the model gets
the time tool;
with the bare `mcp-server-time` it was written with before, the tool is missing, and
`codex-mcp doctor` on the same Codex config names the fix: that absolute path."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from gateway.codex_harness import CODEX, ToolCall, run_codex

ROOT = Path(__file__).resolve().parents[2]
VENV_BIN = Path(sys.executable).parent
#: What the README writes where the reader's installed commands are (`pipx install`).
README_BIN = "/home/you/.local/bin"
NAMESPACE = "mcp__codex_mcp"
TIME_TOOL = "time__get_current_time"
#: The PATH Codex is started with, outside the virtualenv.
CODEX_PATH = os.pathsep.join(
    d for d in os.environ.get("PATH", "").split(os.pathsep) if d and Path(d) != VENV_BIN
)

pytestmark = [
    pytest.mark.interop,
    pytest.mark.slow,
    pytest.mark.skipif(not CODEX.exists(), reason="run .ci/node-tools.sh to install the Codex CLI"),
    pytest.mark.skipif(shutil.which("node", path=CODEX_PATH) is None, reason="node is not on PATH"),
    pytest.mark.skipif(
        not (VENV_BIN / "mcp-server-time").exists(), reason="mcp-server-time is a dev dependency"
    ),
]


def readme_time_server() -> dict[str, Any]:
    """The `time` entry of the README's gateway example (its `files` entry downloads a
    package with npx: not offline)."""
    text = (ROOT / "README.md").read_text()
    section = text[text.index("## All your MCP servers as one: the gateway") :]
    block = re.search(r"```json\n(.*?)```", section, re.S)
    assert block, "the README's gateway section has no JSON example"
    entry: dict[str, Any] = json.loads(block.group(1))["mcpServers"]["time"]
    return entry


def codex_entry(mcp_json: Path) -> str:
    """The README's Codex entry for the gateway, with the clone's real path (required: so
    `codex exec` waits for it before its first turn)."""
    return (
        "[mcp_servers.codex-mcp]\n"
        f"command = {json.dumps(str(VENV_BIN / 'codex-mcp'))}\n"
        "required = true\n"
        f"env = {{ CODEX_MCP_WRAPPER_CONFIG = {json.dumps(str(mcp_json))} }}\n"
    )


async def run_with(tmp_path: Path, time_server: dict[str, Any]) -> tuple[Path, Any]:
    mcp_json = tmp_path / "gateway.mcp.json"
    mcp_json.write_text(json.dumps({"mcpServers": {"time": time_server}}))
    home = tmp_path / "codex-home"
    run = await run_codex(
        home,
        codex_entry(mcp_json),
        call=ToolCall(NAMESPACE, TIME_TOOL, {"timezone": "UTC"}),
        env={"PATH": CODEX_PATH},
    )
    return home, run


async def test_the_readme_example_serves_the_time_tool_under_codex(tmp_path: Path) -> None:
    time_server = readme_time_server()
    assert time_server["command"] == f"{README_BIN}/mcp-server-time", time_server
    time_server["command"] = str(VENV_BIN / "mcp-server-time")
    _, run = await run_with(tmp_path, time_server)
    assert run.returncode == 0, run.output
    assert TIME_TOOL in run.model.tool_namespaces().get(NAMESPACE, []), run.output
    (output,) = {str(o) for o in run.model.tool_outputs()}
    assert "UTC" in output and "datetime" in output, output  # the time server's answer


async def test_a_bare_command_off_codex_path_is_lost_and_doctor_names_the_fix(
    tmp_path: Path,
) -> None:
    if shutil.which("mcp-server-time", path=CODEX_PATH):
        pytest.skip("mcp-server-time is on this machine's PATH outside the virtualenv")
    time_server = {**readme_time_server(), "command": "mcp-server-time"}
    home, run = await run_with(tmp_path, time_server)
    # Codex starts the gateway, which cannot start the time server: its tool never
    # reaches the model (the gateway's own tools do).
    offered = run.model.tool_namespaces().get(NAMESPACE, [])
    assert offered and TIME_TOOL not in offered, (offered, run.output)
    doctor = subprocess.run(
        [sys.executable, str(ROOT / "cmd/mcp"), "doctor", "--config", str(home / "config.toml")],
        env={**os.environ, "PATH": CODEX_PATH, "HOME": str(tmp_path)},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert doctor.returncode == 1, doctor.stdout + doctor.stderr
    fix = f'command = "{VENV_BIN / "mcp-server-time"}"'
    lines = [line for line in doctor.stdout.splitlines() if "'time'" in line or fix in line]
    assert any("not on Codex's PATH" in line for line in lines), doctor.stdout
    assert any(fix in line for line in lines), doctor.stdout
    print(doctor.stdout)
