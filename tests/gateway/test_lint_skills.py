"""`codex-mcp lint` shows the skills (SEP-2640) a server serves: a line of their paths under
the server, and `skills` in its --json entry; a server without skills has none. Over stdio,
with our library skills server and the broken server as real processes."""

from __future__ import annotations

import io
import json
import sys
from pathlib import Path

from codex_mcp.lint.cli import main

from .gateway_helpers import BROKEN

SKILLS_SERVER = str(Path(__file__).resolve().parents[1] / "server/servers/skills_server.py")


def run(*argv: str) -> str:
    out = io.StringIO()
    assert main(list(argv), out=out) == 0, out.getvalue()
    return out.getvalue()


def test_lint_shows_a_servers_skills(tmp_path: Path) -> None:
    command = ["--name", "docs", "--", sys.executable, SKILLS_SERVER]
    assert "\n  skills: team/code-review\n" in run(*command)
    (server,) = json.loads(run("--json", *command))["servers"]
    assert server["skills"] == ["team/code-review"]
    assert [t["tool"] for t in server["tools"]] == ["ping"]
    (plain,) = json.loads(run("--json", "--name", "brk", "--", *BROKEN, "--tools", "echo"))[
        "servers"
    ]
    assert plain["skills"] == []
