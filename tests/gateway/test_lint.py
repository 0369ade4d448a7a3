"""`codex-mcp lint` against real servers over real transports: the broken server, our examples
server (`codex-mcp --serve`), the npm reference server, an HTTP server, a `.mcp.json`."""

from __future__ import annotations

import copy
import io
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from codex_mcp.codex_compat.check import Listing, lint_servers
from codex_mcp.codex_compat.repair import apply_tool_settings, repair_tool
from codex_mcp.gateway.config.load import read_config
from codex_mcp.gateway.routing.naming import NameTable
from codex_mcp.lint.cli import main
from codex_mcp.lint.fix import fix_plan

from .servers import broken_server

if TYPE_CHECKING:
    from conftest import LaunchHttp

ROOT = Path(__file__).resolve().parents[2]
BROKEN = [sys.executable, str(Path(__file__).parent / "servers" / "broken_server.py")]
EVERYTHING_NPM = ROOT / ".tools/npm/node_modules/.bin/mcp-server-everything"
LONG = broken_server.LONG_NAME


def definitions(*names: str) -> list[dict[str, Any]]:
    return [{"name": n, **copy.deepcopy(broken_server.TOOLS[n][0])} for n in names]


def run(*argv: str) -> tuple[int, str]:
    out = io.StringIO()
    code = main(list(argv), out=out)
    return code, out.getvalue()


def run_json(*argv: str) -> tuple[int, dict[str, Any]]:
    code, text = run("--json", *argv)
    return code, json.loads(text)


def by_tool(document: dict[str, Any], server: int = 0) -> dict[str, dict[str, Any]]:
    return {t["tool"]: t for t in document["servers"][server]["tools"]}


def rules(tool: dict[str, Any]) -> set[str]:
    return {f["rule"] for f in tool["findings"]}


def rules_of(tool: Any) -> set[str]:
    return {f.rule for f in tool.findings}


# -- the engine, on definitions ------------------------------------------------------------


def test_what_codex_does_to_each_broken_tool() -> None:
    names = [n for n in broken_server.TOOLS if n != "snake_case"]
    report = lint_servers([Listing("brk", definitions(*names))])
    tools = {t.tool: t for t in report.tools}
    assert {n for n, t in tools.items() if t.lost} == {"null_root", "bad_properties"}
    assert tools["dash-name"].codex_name == "mcp__brk__dash_name"
    assert tools["dot.name"].codex_name == "mcp__brk__dot_name_542085014c10"
    assert tools["dot_name"].codex_name == "mcp__brk__dot_name_4d83208852ce"
    assert {f.rule for f in tools["huge_schema"].findings} == {"compacted"}
    assert {f.rule for f in tools["no_annotations"].findings} == {"needs-approval"}
    assert {f.rule for f in tools["structured"].findings} == {"structured-only"}
    assert tools["echo"].findings == [] and tools["echo"].status == "kept"
    assert tools[LONG].status == "kept"  # 85 characters with its namespace: under Codex's 128
    assert report.exit_code == 1 and report.lost == 2
    every = {f.source for t in report.tools for f in t.findings}
    assert all(source.startswith("codex-rs/") for source in every)


def test_one_unreadable_definition_loses_the_whole_server() -> None:
    report = lint_servers([Listing("brk", definitions("echo", "snake_case", "dash-name"))])
    (server,) = report.servers
    assert [f.rule for f in server.findings] == ["server-lost"]
    assert "tool 'snake_case'" in server.findings[0].message
    assert {t.status for t in server.tools} == {"lost with its server"} and report.lost == 3


def test_a_duplicate_is_skipped_and_colliding_servers_are_hashed() -> None:
    report = lint_servers(
        [Listing("a-b", definitions("echo", "echo")), Listing("a_b", definitions("echo"))]
    )
    first, second = report.servers
    # The second echo is skipped, not lost: Codex shows the name and calls the first.
    assert [t.status for t in first.tools] == ["changed", "duplicate"]
    assert not report.lost and first.tools[1].findings[0].severity == "warn"
    assert first.tools[0].codex_name == first.tools[1].codex_name == "mcp__a_b_e0598e406614__echo"
    assert second.tools[0].codex_name == "mcp__a_b_909e3df97957__echo"
    assert {f.rule for f in second.tools[0].findings} == {"hashed"}


def test_the_fix_config_is_a_valid_gateway_config_that_repairs_everything(tmp_path: Path) -> None:
    """--fix's output, parsed as the gateway would and applied as the gateway will (repair,
    per-tool settings, names): the result, as Codex sees it, loses nothing."""
    tools = definitions(*broken_server.TOOLS)
    code, document = run_json("--fix", "--", *BROKEN)
    assert code == 1
    path = tmp_path / ".mcp.json"
    path.write_text(json.dumps(document["fix"]["config"]))
    (server,) = read_config(path).servers
    assert server.repair.shrink_descriptions
    table = NameTable()
    served = []
    for tool in tools:
        repaired = repair_tool(tool, server.repair)
        assert repaired.dropped is None
        named = table.add(server.name, tool["name"])
        if named is not None:
            final = apply_tool_settings(repaired.tool, server.tool_settings(tool["name"])).tool
            served.append({**final, "name": named.name})
    report = lint_servers([Listing("codex-mcp", served)])
    assert report.lost == 0 and report.exit_code == 0
    left = {f.rule for t in report.tools for f in t.findings}
    assert left <= {"structured-only", "needs-approval"}, left
    # What still needs approval is what --fix would not vouch for: the tools that may write.
    asking = {t.tool for t in report.tools if "needs-approval" in rules_of(t)}
    needs = {f"{i['server']}__{i['tool']}" for i in document["fix"]["needsApproval"]}
    assert asking == needs and "broken_server__not_read_only" in asking


# -- the CLI, over real transports -----------------------------------------------------------


def test_lint_the_broken_server_over_stdio() -> None:
    code, document = run_json("--name", "brk", "--", *BROKEN)
    assert code == 1
    tools = by_tool(document)
    assert document["summary"]["lost"] == len(tools)  # snake_case takes the server down
    assert rules(tools["echo"]) == set() and tools["echo"]["status"] == "lost with its server"
    assert tools["echo"]["codexName"] is None and rules(tools["null_root"]) == {"dropped"}
    assert document["servers"][0]["findings"][0]["rule"] == "server-lost"


def test_a_server_with_nothing_lost_exits_zero() -> None:
    code, text = run(
        "--name", "brk", "--", *BROKEN, "--tools", "echo,dash-name,no_annotations,huge_schema"
    )
    assert code == 0
    assert "mcp__brk__dash_name" in text and "needs-approval" in text and "compacted" in text
    assert "4 tool(s) on 1 server(s): 2 kept as they are, 2 changed by Codex, 0 lost" in text


def test_lint_our_examples_server_through_codex_mcp_serve() -> None:
    codex_mcp = str(Path(sys.executable).parent / "codex-mcp")
    code, document = run_json(
        "--", codex_mcp, "--serve", str(ROOT / "examples/everything_server.py")
    )
    assert code == 0
    tools = by_tool(document)
    assert len(tools) >= 15 and all(t["status"] in ("kept", "changed") for t in tools.values())
    assert tools["test_simple_text"]["codexName"] == "mcp__codex_mcp__test_simple_text"
    assert "needs-approval" in rules(tools["touch_watched_resource"])
    assert "structured-only" in rules(tools["weather"])
    assert rules(tools["json_schema_2020_12_tool"]) == {"lowered"}


@pytest.mark.interop
@pytest.mark.skipif(
    not EVERYTHING_NPM.exists(), reason="run scripts/setup.sh for the npm reference servers"
)
def test_lint_the_reference_everything_server() -> None:
    code, document = run_json("--", str(EVERYTHING_NPM))
    assert code == 0
    tools = by_tool(document)
    assert tools["get-sum"]["codexName"] == "mcp__mcp_server_everything__get_sum"
    assert rules(tools["get-sum"]) == {"renamed"}
    assert tools["echo"]["status"] == "kept"
    assert "structured-only" in rules(tools["get-structured-content"])


def test_lint_a_url(launch_http: LaunchHttp) -> None:
    code, document = run_json(launch_http())
    assert code == 0
    tools = by_tool(document)
    assert {"echo", "sleep"} <= set(tools)
    assert document["servers"][0]["server"] == "127.0.0.1"


def test_lint_a_config_file_with_a_server_that_cannot_start(tmp_path: Path) -> None:
    config = {
        "mcpServers": {
            "good": {"command": BROKEN[0], "args": [*BROKEN[1:], "--tools", "echo"]},
            "bad": {"command": BROKEN[0], "args": [*BROKEN[1:], "--tools", "echo,null_root"]},
            "ghost": {"command": "/nonexistent/mcp-server"},
            "off": {"command": "/nonexistent/other", "enabled": False},
        }
    }
    path = tmp_path / ".mcp.json"
    path.write_text(json.dumps(config))
    code, document = run_json(str(path))
    assert code == 1
    good, bad, ghost = document["servers"]
    assert (good["server"], bad["server"], ghost["server"]) == ("good", "bad", "ghost")
    assert good["tools"][0]["codexName"] == "mcp__good__echo"
    assert by_tool(document, 1)["null_root"]["status"] == "dropped"
    # A path that is not there is no such file (not a command PATH lacks).
    assert ghost["error"].startswith("Spawn error: no such file '/nonexistent/mcp-server'.")
    code, document = run_json(str(path), "--server", "good")
    assert code == 0 and len(document["servers"]) == 1


@pytest.mark.slow
def test_slow_servers(tmp_path: Path) -> None:
    code, document = run_json("--", *BROKEN, "--tools", "echo", "--slow-list", "1.5")
    assert code == 0
    assert [f["rule"] for f in document["servers"][0]["findings"]] == ["slow-start"]
    code, document = run_json(
        "--timeout", "1", "--", *BROKEN, "--tools", "echo", "--slow-list", "30"
    )
    assert code == 1 and document["servers"][0]["error"] == "no tools/list within 1 s"


def test_bad_arguments_exit_two(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text('{"mcpServers": {"x": {"command": 1}}}')
    assert run(str(bad))[0] == 2
    assert 'mcpServers.x: "command" must be a string' in capsys.readouterr().err
    assert run("http://127.0.0.1:1/mcp", "--header", "nocolon")[0] == 2


# -- what --fix never proposes, and what lint tells about sharing ----------------------------

FILESYSTEM = ROOT / ".tools/servers/node_modules/.bin/mcp-server-filesystem"


def _custom(*tools: dict[str, Any]) -> list[str]:
    listed = [{"inputSchema": {"type": "object", "properties": {}}, **tool} for tool in tools]
    return [*BROKEN, "--tools", "none", "--custom-tools", json.dumps(listed)]


def test_fix_never_marks_a_tool_that_changes_things_read_only() -> None:
    server = _custom(
        {"name": "delete_note"},
        {"name": "sendEmail"},
        {"name": "notes", "description": "Appends a line to the notes file."},
        {"name": "tidy", "annotations": {"destructiveHint": True}},
        {"name": "stamp", "annotations": {"readOnlyHint": False}},
        {"name": "lookup", "description": "Find a word in the dictionary."},
    )
    code, document = run_json("--fix", "--name", "brk", "--", *server)
    assert code == 0
    assert document["fix"]["config"]["mcpServers"]["brk"]["tools"] == {
        "lookup": {"annotations": {"readOnlyHint": True}}
    }
    why = {item["tool"]: item["why"] for item in document["fix"]["needsApproval"]}
    assert why == {
        "delete_note": "its name says it deletes ('delete')",
        "sendEmail": "its name says it sends ('send')",
        "notes": "its description says it writes ('appends')",
        "tidy": "its server says it is destructive",
        "stamp": "its server says it is not read-only",
    }
    assert "interactive Codex asks you" in document["fix"]["approvalAdvice"]
    code, text = run("--fix", "--name", "brk", "--", *server)
    assert "Needs approval in Codex (no readOnlyHint proposed):" in text
    assert "  brk: delete_note: its name says it deletes ('delete')" in text
    assert "what you can do: interactive Codex asks you before each call" in text


@pytest.mark.interop
@pytest.mark.skipif(not FILESYSTEM.exists(), reason="run scripts/setup.sh for server-filesystem")
def test_fix_leaves_the_filesystem_servers_writes_to_approval(tmp_path: Path) -> None:
    code, document = run_json("--fix", "--name", "fs", "--", str(FILESYSTEM), str(tmp_path))
    assert code == 0
    # (No entry at all when --fix would change nothing in it.)
    marked = document["fix"]["config"]["mcpServers"].get("fs", {}).get("tools") or {}
    for tool in ("write_file", "edit_file", "move_file", "create_directory"):
        assert tool not in marked
    needs = {item["tool"] for item in document["fix"]["needsApproval"]}
    assert {"write_file", "edit_file", "move_file"} <= needs


def test_lint_says_when_a_shared_stdio_server_should_be_per_session(tmp_path: Path) -> None:
    """A stdio server that logs (it may, outside any call): served over HTTP as a shared
    child, what no call claims reaches no client, so lint says to mark it per_session."""
    examples = {
        "command": sys.executable,
        "args": [str(ROOT / "cmd/mcp"), "--serve", str(ROOT / "examples/everything_server.py")],
    }
    config = {
        "mcpServers": {
            "shared": examples,
            "own": {**examples, "per_session": True},
            "quiet": {"command": BROKEN[0], "args": [*BROKEN[1:], "--tools", "echo"]},
        }
    }
    path = tmp_path / ".mcp.json"
    path.write_text(json.dumps(config))
    code, document = run_json(str(path))
    assert code == 0
    found = {
        s["server"]: [f for f in s["findings"] if f["rule"] == "per-session"]
        for s in document["servers"]
    }
    assert [f["severity"] for f in found["shared"]] == ["info"]
    assert 'set "per_session": true' in found["shared"][0]["message"]
    assert "during calls" in found["shared"][0]["message"]
    assert found["own"] == [] and found["quiet"] == []


def test_a_missing_config_file_is_no_such_file(tmp_path: Path, capsys: Any) -> None:
    missing = str(tmp_path / "nowhere" / ".mcp.json")
    code, _ = run(missing)
    assert code == 2
    assert f"{missing}: no such file" in capsys.readouterr().err


def test_fix_says_a_note_once_for_every_server_it_holds_for() -> None:
    """Three servers with the same repairs: each note is one line naming the three (it was
    a line per server and kind), and a server whose only finding is tools that may change
    something gets no entry (it would be printed unchanged)."""
    listings = [Listing(name, definitions("dash-name", "huge_schema")) for name in ("a", "b", "c")]
    writer = {"name": "delete_note", "inputSchema": {"type": "object", "properties": {}}}
    listings.append(Listing("writes", [writer]))
    plan = fix_plan(lint_servers(listings), {})
    assert sorted(plan.config["mcpServers"]) == ["a", "b", "c"]
    assert len(plan.notes) == len(set(plan.notes))
    shrink = [note for note in plan.notes if "shrink_descriptions" in note]
    assert len(shrink) == 1 and shrink[0].startswith("a, b, c: "), plan.notes
    assert [(i.server, i.tool) for i in plan.needs_approval] == [("writes", "delete_note")]


def test_lint_fix_lists_the_tools_that_need_approval_for_one_reason_on_one_line() -> None:
    server = _custom({"name": "delete_note"}, {"name": "delete_page"}, {"name": "sendEmail"})
    _, text = run("--fix", "--name", "brk", "--", *server)
    assert "  brk: delete_note, delete_page: its name says it deletes ('delete')" in text
    assert "  brk: sendEmail: its name says it sends ('send')" in text
    assert "Nothing for the gateway to repair." in text


def test_the_main_table_says_a_finding_once_naming_every_tool_it_holds_for() -> None:
    """Ten tools without readOnlyHint: the report has one needs-approval line naming them
    (it was the same line under each tool), past eight names it says how many more, and a
    finding that differs per tool keeps a line of its own."""
    names = [f"write_{n}" for n in range(10)]
    server = _custom(*({"name": name} for name in names), {"name": "dash-name"})
    code, text = run("--name", "brk", "--", *server)
    assert code == 0
    approval = [line for line in text.splitlines() if "needs-approval" in line]
    assert approval == [
        f"  warn  needs-approval [{', '.join(names[:8])} and 3 more]: "
        + approval[0].split("]: ")[1]
    ], text
    assert "readOnlyHint" in approval[0]
    assert text.count("characters outside [A-Za-z0-9_]") == 1 and "renamed [dash-name]" in text
