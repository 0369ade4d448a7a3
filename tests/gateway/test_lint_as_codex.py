"""`codex-mcp lint` greets a server as Codex 0.171 does (a server may list tools only to a
client that declares elicitation: server-everything lists 15 to Codex, it listed 13 to lint),
and says a finding that holds for many tools once. A wiretap between lint (or doctor) and the
server records what they sent; tests/doctor/test_doctor_against_codex.py records the real
Codex the same way."""

from __future__ import annotations

import io
import json
import sys
from pathlib import Path
from typing import Any

import pytest
from codex_mcp.lint.cli import main as lint

ROOT = Path(__file__).resolve().parents[2]
BROKEN = [sys.executable, str(Path(__file__).parent / "servers" / "broken_server.py")]
WIRETAP = str(ROOT / "tests/interop/servers/codex_wiretap.py")
EVERYTHING_NPM = ROOT / ".tools/npm/node_modules/.bin/mcp-server-everything"
#: What Codex 0.171.0 sent in `initialize`, read off the wire (tests/doctor/
#: test_doctor_against_codex.py compares it with the real binary's each run).
CODEX_INITIALIZE = {
    "protocolVersion": "2025-06-18",
    "capabilities": {"experimental": {"codex/auth-change": {}}, "elicitation": {"form": {}, "url": {}}},
    "clientInfo": {"name": "codex-mcp-client", "title": "Codex", "version": "0.171.0"},
}  # fmt: skip


def sent(wire: Path, method: str) -> list[dict[str, Any]]:
    """The params of every `method` request the client sent through the wiretap."""
    found = []
    for line in wire.read_text().splitlines():
        mark, _, text = line.partition(" ")
        message = json.loads(text)
        if mark == ">" and message.get("method") == method:
            found.append(message.get("params"))
    return found


def run(*argv: str) -> tuple[int, str]:
    out = io.StringIO()
    return lint(list(argv), out=out), out.getvalue()


def test_lint_says_in_initialize_what_codex_says(tmp_path: Path) -> None:
    wire = tmp_path / "wire.log"
    server = [*BROKEN, "--tools", "echo"]
    code, _ = run("--name", "brk", "--", sys.executable, WIRETAP, str(wire), "--", *server)
    assert code == 0
    assert sent(wire, "initialize") == [CODEX_INITIALIZE]


@pytest.mark.interop
@pytest.mark.skipif(
    not EVERYTHING_NPM.exists(), reason="run scripts/setup.sh for the npm reference servers"
)
def test_lint_lists_every_tool_the_reference_server_gives_codex() -> None:
    code, text = run("--json", "--", str(EVERYTHING_NPM))
    assert code == 0
    (server,) = json.loads(text)["servers"]
    names = {t["tool"] for t in server["tools"]}
    assert len(names) == 15, sorted(names)  # what doctor, the gateway and Codex list
    assert {"trigger-elicitation-request", "trigger-url-elicitation"} <= names


def test_a_finding_that_differs_only_by_tool_is_one_line(tmp_path: Path) -> None:
    """Twelve dashed names: one `renamed` line naming them (it was a line each, because the
    message carried the name the model sees, which the table beside it already shows)."""
    names = [f"get-item-{n}" for n in range(12)]
    listed = [
        {"name": name, "inputSchema": {"type": "object"}, "annotations": {"readOnlyHint": True}}
        for name in names
    ]
    server = [*BROKEN, "--tools", "none", "--custom-tools", json.dumps(listed)]
    code, text = run("--name", "brk", "--", *server)
    assert code == 0
    renamed = [line for line in text.splitlines() if " renamed " in line]
    assert len(renamed) == 1, text
    assert "[get-item-0, " in renamed[0] and "and 4 more" in renamed[0]
    for name in names:  # each name the model sees is still shown, in the table
        assert f"mcp__brk__{name.replace('-', '_')}" in text


def test_a_server_finding_said_of_several_servers_is_one_line(tmp_path: Path) -> None:
    """Two servers that declare logging: the long `per-session` advice once, naming both (it
    was printed in full under each)."""
    entry = {"command": sys.executable, "args": [str(ROOT / "cmd/mcp")]}
    config = tmp_path / ".mcp.json"
    config.write_text(json.dumps({"mcpServers": {"a": entry, "b": entry}}))
    code, text = run(str(config))
    assert code == 0
    advice = [line for line in text.splitlines() if "per_session" in line]
    assert len(advice) == 1 and "per-session [a, b]" in advice[0], text
    assert text.count("per-session: as for several servers (below)") == 2
