"""The real Codex CLI 0.171, offline with a recording model, lists a skill an MCP server
served once `codex-mcp skills sync` (the real command) wrote it into its skills folder, beside
the user's own skill of the same name, each under a name of its own (specs/trust.md, "Skills
into Codex")."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from gateway.codex_harness import CODEX, run_codex
from gateway.gateway_helpers import gateway
from support.polling import until

from trust.trust_helpers import env_with, scripted_config, skill, write_script

pytestmark = [
    pytest.mark.interop,
    pytest.mark.slow,
    pytest.mark.skipif(not CODEX.exists(), reason=f"no Codex CLI at {CODEX}"),
]


def skills_listed(requests: list[dict[str, Any]]) -> dict[str, str]:
    """name -> the file Codex gave for it, from the skills block of its first request."""
    for item in requests[0].get("input", []):
        for part in item.get("content", []):
            text = part.get("text", "")
            if "<skills_instructions>" in text:
                return dict(re.findall(r"^- (.+?): .*\(file: (.+?)\)$", text, re.MULTILINE))
    return {}


async def test_codex_lists_a_synced_skill_beside_the_users_own(tmp_path: Path) -> None:
    home = tmp_path / "codex-home"
    mine = home / "skills" / "pdf-tools"
    mine.mkdir(parents=True)
    (mine / "SKILL.md").write_text(
        "---\nname: pdf-tools\ndescription: My own PDF notes.\n---\nmine\n"
    )
    served = skill(
        "skill://pdf-tools/SKILL.md", "pdf-tools", "Fill PDF forms (served by an MCP server).",
        {"skill://pdf-tools/scripts/fill.py": "print('fill')\n"},
    )  # fmt: skip
    scripted_config(tmp_path, {"docs": write_script(tmp_path / "script.json", skills=[served])})
    synced = subprocess.run(
        [sys.executable, "-m", "codex_mcp.cli.stdio", "skills", "sync"],
        cwd=tmp_path, env=env_with(CODEX_HOME=str(home)), capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert synced.returncode == 0, synced.stdout + synced.stderr
    assert "wrote docs:pdf-tools (docs/pdf-tools) in codex-mcp/docs.pdf-tools" in synced.stdout
    run = await run_codex(home, "")
    listed = skills_listed(run.model.requests)
    assert listed.get("docs:pdf-tools", "").endswith("codex-mcp/docs.pdf-tools/SKILL.md"), (
        listed,
        run.output,
    )
    assert listed.get("pdf-tools", "").endswith("pdf-tools/SKILL.md")
    assert (
        home / "skills/codex-mcp/docs.pdf-tools/scripts/fill.py"
    ).read_text() == "print('fill')\n"
    assert (mine / "SKILL.md").read_text().endswith("mine\n")


async def test_a_gateway_with_skills_sync_on_writes_what_codex_then_lists(tmp_path: Path) -> None:
    home = tmp_path / "codex-home"
    served = skill("skill://review/SKILL.md", "review", "Review a change the team's way.")
    config = scripted_config(
        tmp_path,
        {"team": write_script(tmp_path / "script.json", skills=[served])},
        skills_sync=True,
    )
    written = home / "skills/codex-mcp/team.review/SKILL.md"
    async with gateway(config, env={"CODEX_HOME": str(home)}) as client:
        await client.list_tools()  # what a client does first; the gateway syncs meanwhile
        await until(written.exists, timeout=30, what="the gateway's sync")
    run = await run_codex(home, "")
    listed = skills_listed(run.model.requests)
    assert listed.get("team:review", "").endswith("codex-mcp/team.review/SKILL.md"), listed
