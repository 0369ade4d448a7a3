"""The TypeScript SDK 2.x's SkillsClient (the library the Inspector and other hosts use) reads
a skill's directory from our server in both revisions: the extension's result schema requires
`ttlMs` and `cacheScope` on a directory read, and the client refused ours without them."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
CLIENT = ROOT / ".tools/ts-client/node_modules/@modelcontextprotocol/client"
SCRIPT = Path(__file__).parent / "ts_skills_directory.mjs"
SKILLS_SERVER = ROOT / "tests/server/servers/skills_server.py"

pytestmark = [
    pytest.mark.interop,
    pytest.mark.skipif(not (CLIENT / "package.json").exists(), reason="run .ci/node-tools.sh"),
    pytest.mark.skipif(shutil.which("node") is None, reason="node is not on PATH"),
]


@pytest.mark.parametrize("revision", ["legacy", "2026-07-28"])
def test_the_typescript_client_reads_a_skill_directory(revision: str) -> None:
    done = subprocess.run(
        ["node", str(SCRIPT), str(CLIENT), revision, sys.executable, str(SKILLS_SERVER)],
        capture_output=True,
        text=True,
        timeout=90,
        check=True,
    )
    result = json.loads(done.stdout.strip().splitlines()[-1])
    assert "error" not in result, result
    assert "skill://team/code-review/SKILL.md" in result["resources"]
    if revision != "legacy":  # the client hands the hints on for 2026-07-28 only
        assert (result["ttlMs"], result["cacheScope"]) == (60_000, "public"), result
