"""`codex-mcp lint` and `codex-mcp doctor` say what pinning does: a tool whose definition
changed since it was trusted is `withheld` (lost to Codex until accepted, with the fix:
`codex-mcp trust`), and doctor lists the MCP skills Codex lists from its folder after
`codex-mcp skills sync` (specs/trust.md)."""

from __future__ import annotations

import asyncio
import io
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from codex_mcp.lint.cli import main as lint
from doctor.doctor_helpers import CODEX_MCP, bare_env, doctor, toml_string, write_codex_config
from gateway.gateway_helpers import gateway

from trust.test_rug_pull import ADD, POISONED
from trust.trust_helpers import scripted_config, skill, write_script

pytestmark = pytest.mark.slow


async def test_lint_names_a_tool_the_gateway_would_withhold(tmp_path: Path) -> None:
    script = write_script(tmp_path / "calc.json", tools=[ADD])
    config = scripted_config(tmp_path, {"calc": script})
    async with gateway(config) as client:  # the gateway pins what it serves
        await client.list_tools()
    write_script(script, tools=[POISONED])
    out = io.StringIO()
    assert await asyncio.to_thread(lint, [str(config)], out=out) == 1
    text = out.getvalue()
    assert "WITHHELD" in text and "withheld [add]" in text, text
    assert "the description of tool 'add' (server 'calc') changed since it was trusted" in text
    out = io.StringIO()
    await asyncio.to_thread(lint, [str(config), "--json"], out=out)
    (tool,) = json.loads(out.getvalue())["servers"][0]["tools"]
    assert tool["status"] == "withheld" and tool["codexName"] is None


def test_doctor_says_withheld_and_lists_the_synced_skills(tmp_path: Path) -> None:
    home = tmp_path / "home"
    script = write_script(
        tmp_path / "calc.json",
        tools=[ADD],
        skills=[skill("skill://sums/SKILL.md", "sums", "Add up columns.")],
    )
    mcp_json = scripted_config(tmp_path, {"calc": script})
    entry = (
        "[mcp_servers.gateway]\n"
        f"command = {toml_string(CODEX_MCP)}\n"
        f"env = {{ CODEX_MCP_WRAPPER_CONFIG = {toml_string(str(mcp_json))} }}\n"
    )
    codex = home / ".codex"
    config = write_codex_config(codex, entry)
    first = doctor(tmp_path, "--config", str(config), "--json", env=bare_env(home))
    assert first.code == 0, first.out + first.err  # first use: pinned and served
    write_script(
        script, tools=[POISONED], skills=[skill("skill://sums/SKILL.md", "sums", "Add up columns.")]
    )
    # The MCP skills Codex lists: what skills sync wrote in Codex's folder.
    synced = subprocess.run(
        [sys.executable, "-m", "codex_mcp.cli.stdio", "skills", "sync", "--codex-home", str(codex)],
        env={**bare_env(home), "CODEX_MCP_WRAPPER_CONFIG": str(mcp_json)},
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert synced.returncode == 0, synced.stdout + synced.stderr
    # The gateway serves a child's kept listing while the child starts (specs/gateway.md),
    # the trusted one here: without it, doctor's listing is the child's own, changed.
    shutil.rmtree(home / ".cache" / "codex-mcp" / "listings")
    ran = doctor(tmp_path, "--config", str(config), "--json", env=bare_env(home))
    assert ran.code == 1, ran.err
    document = ran.json()
    (server,) = document["servers"]
    withheld = [t for t in server["tools"] if t["status"] == "withheld"]
    assert withheld == [{"tool": "calc/add", "codexName": None, "status": "withheld"}]
    (found,) = [f for f in server["findings"] if f["rule"] == "withheld"]
    assert found["severity"] == "lost" and "codex-mcp trust" in found["fix"]
    assert document["summary"]["lost"] == 1
    assert document["mcpSkills"] == [{"name": "calc:sums", "from": "calc/sums"}]
    text = doctor(tmp_path, "--config", str(config), env=bare_env(home)).out
    assert (
        "WITHHELD" in text and "MCP skills Codex lists (codex-mcp skills sync): calc:sums" in text
    )
