"""`codex-mcp-client skills`, `skill URI` and `dir URI` (SEP-2640) as a real process
against our library skills server over stdio: the entries as the server sent them, one
entry, a folder's children; an unknown skill and a server without skills fail with one
line and exit 1."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

#: Each test runs the CLI three times, each starting a server: 3 s at a load of 4.
pytestmark = pytest.mark.slow

CLI = [sys.executable, "-m", "codex_mcp.client.cli"]
SKILLS_SERVER = str(Path(__file__).resolve().parents[1] / "server/servers/skills_server.py")
LIBRARY_SERVER = str(Path(__file__).resolve().parents[1] / "server/servers/library_server.py")
CODE_REVIEW = "skill://team/code-review/SKILL.md"


def run(*args: str, server: str = SKILLS_SERVER) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*CLI, *args, "--", sys.executable, server], capture_output=True, text=True, timeout=60
    )


def test_skills_skill_and_dir() -> None:
    listed = run("skills")
    assert listed.returncode == 0, listed.stderr
    (entry,) = json.loads(listed.stdout)
    assert entry["uri"] == CODE_REVIEW and entry["frontmatter"]["license"] == "MIT"
    got = run("skill", CODE_REVIEW)
    assert got.returncode == 0 and json.loads(got.stdout) == entry
    children = run("dir", "skill://team/code-review")
    assert [c["uri"] for c in json.loads(children.stdout)] == [
        CODE_REVIEW,
        "skill://team/code-review/templates",
    ]


def test_an_unknown_skill_and_a_server_without_skills() -> None:
    unknown = run("skill", "skill://nope/SKILL.md")
    assert unknown.returncode == 1 and unknown.stdout == ""
    assert "No skill is served at skill://nope/SKILL.md (code -32602)" in unknown.stderr
    none = run("skills", server=LIBRARY_SERVER)
    assert none.returncode == 1
    assert (
        none.stderr.strip() == "codex-mcp-client: the server does not declare the Skills extension"
    )
    usage = run("skill")
    assert usage.returncode == 2 and "skill needs URI" in usage.stderr
