"""doctor where Codex's own options change what Codex does (issue 40): the 2026-07-28 opt-in
(discover first, then `initialize`), a tool name listed twice (the first wins), the sandbox and
approval policy of the config and its profile, fixes that fit the entry (a bearer token, an
entry that is the gateway), and a summary that agrees with the exit status. What the real
Codex does in each case is in tests/doctor/test_doctor_against_codex.py."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from .doctor_helpers import (
    BROKEN_SERVER,
    CODEX_MCP,
    PY,
    bare_env,
    broken_entry,
    doctor,
    toml_list,
    toml_string,
    write_codex_config,
)

if TYPE_CHECKING:
    from conftest import LaunchHttp

SERVERS = Path(__file__).resolve().parents[1] / "gateway/servers"
STATELESS_ONLY = str(SERVERS / "stateless_only.py")
LEGACY_ONLY = str(SERVERS / "legacy_only.py")
OPT_IN = "[features]\nmcp_2026_07_28 = true\n\n"
MARKER = 'env = { CODEX_MCP_PROTOCOL_VERSION = "2026-07-28" }\n'
#: A 2020-12 schema whose anyOf branches only constrain the object (examples/everything_server.py).
SCHEMA_2020_12 = {
    "type": "object",
    "properties": {"phone": {"type": "string"}, "email": {"type": "string"}},
    "allOf": [{"anyOf": [{"required": ["phone"]}, {"required": ["email"]}]}],
}


def python_entry(name: str, *args: str) -> str:
    return f"[mcp_servers.{name}]\ncommand = {toml_string(PY)}\nargs = {toml_list(list(args))}\n"


def only_server(tmp_path: Path, text: str, *options: str) -> tuple[int, dict[str, Any]]:
    config = write_codex_config(tmp_path / "codex", text)
    ran = doctor(tmp_path, "--config", str(config), "--json", *options)
    document = ran.json()
    assert document["exitCode"] == ran.code, ran.err
    (server,) = document["servers"]
    return ran.code, server


def rules(server: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {f["rule"]: f for f in server["findings"]}


# -- the 2026-07-28 opt-in ------------------------------------------------------------------


@pytest.mark.slow
def test_a_2026_only_server_opted_in_is_discovered_not_greeted(tmp_path: Path) -> None:
    """Codex 0.171 with the feature and the entry's marker sends server/discover first: a
    server that refuses `initialize` is one Codex uses (it was reported lost, exit 1)."""
    code, server = only_server(tmp_path, OPT_IN + python_entry("modern", STATELESS_ONLY) + MARKER)
    assert code == 0, server
    assert server["status"] == "ok"
    named = {t["tool"]: t["codexName"] for t in server["tools"]}
    assert named["add"] == "mcp__modern__add"


@pytest.mark.slow
def test_opted_in_a_server_without_discover_falls_back_to_initialize(tmp_path: Path) -> None:
    code, server = only_server(tmp_path, OPT_IN + python_entry("old", LEGACY_ONLY) + MARKER)
    assert code == 0 and server["status"] == "ok", server
    assert "mcp__old__add" in {t["codexName"] for t in server["tools"]}


@pytest.mark.slow
@pytest.mark.parametrize("half", ["feature only", "marker only"])
def test_half_the_opt_in_is_no_opt_in(tmp_path: Path, half: str) -> None:
    """Over stdio Codex needs both: with either alone it greets the server with `initialize`,
    which a 2026-07-28-only server refuses."""
    text = python_entry("modern", STATELESS_ONLY)
    text = OPT_IN + text if half == "feature only" else text + MARKER
    code, server = only_server(tmp_path, text)
    assert code == 1 and server["status"] != "ok", server


# -- a name listed twice ----------------------------------------------------------------------


def test_a_name_listed_twice_is_shown_once_the_first_definition_wins(tmp_path: Path) -> None:
    second = {"name": "echo", "description": "the second echo", "inputSchema": {"type": "object"}}
    entry = broken_entry("brk", "--tools", "echo", "--custom-tools", json.dumps([second]))
    code, server = only_server(tmp_path, entry)
    assert code == 0, server  # nothing lost: Codex shows and calls the first echo
    assert server["tools"] == [{"tool": "echo", "codexName": "mcp__brk__echo", "status": "kept"}]
    duplicate = rules(server)["duplicate"]
    assert duplicate["severity"] == "warn" and duplicate["tools"] == ["echo"]
    assert "first" in duplicate["message"]


# -- the sandbox and approval policy -------------------------------------------------------------

NO_HINT = broken_entry("brk", "--tools", "echo,no_annotations")


FULL = 'sandbox_mode = "danger-full-access"\n'


@pytest.mark.parametrize(
    ("top", "profile", "exec_refuses"),
    [
        ("", None, True),
        (FULL, None, False),
        ('approval_policy = "never"\nsandbox_mode = "workspace-write"\n', None, True),
        ('approval_policy = "never"\n' + FULL, None, False),
        ("", FULL, False),  # --profile p, with p.config.toml beside config.toml
        (FULL, 'sandbox_mode = "read-only"\n', True),
    ],
    ids=["defaults", "full-access", "never-workspace", "never-full-access", "profile-full",
         "profile-read-only"],
)  # fmt: skip
def test_approval_follows_the_sandbox_of_the_config_and_its_profile(
    tmp_path: Path, top: str, profile: str | None, exec_refuses: bool
) -> None:
    """`codex exec` runs with approval `never`: it refuses a tool without readOnlyHint unless
    the sandbox is danger-full-access, where it runs every tool unasked (as the real Codex did:
    test_doctor_against_codex.py). It said "refuses" under full access. Codex 0.171's profiles
    are files: `--profile p` merges p.config.toml over config.toml."""
    options: tuple[str, ...] = ()
    if profile is not None:
        write_codex_config(tmp_path / "codex", "")  # the directory
        (tmp_path / "codex" / "p.config.toml").write_text(profile)
        options = ("--profile", "p")
    _, server = only_server(tmp_path, top + "\n" + NO_HINT, *options)
    finding = rules(server)["needs-approval"]
    assert finding["tools"] == ["no_annotations"]
    assert ("`codex exec`" in finding["message"] and "refuses" in finding["message"]) is (
        exec_refuses
    ), finding
    assert finding["severity"] == ("warn" if exec_refuses else "info")
    if not exec_refuses:
        assert "runs it without asking" in finding["message"], finding
        assert finding["fix"] is None


@pytest.mark.parametrize(
    ("top", "options", "said"),
    [
        ('profile = "yolo"\n', (), "legacy profile"),
        ('[profiles.yolo]\nsandbox_mode = "danger-full-access"\n', ("--profile", "yolo"),
         "[profiles.yolo]"),
        ("", ("--profile", "../etc"), "plain name"),
        ('sandbox_mode = "sometimes"\n', (), "sandbox_mode"),
        ("[features]\nmcp_2026_07_28 = \"yes\"\n", (), "mcp_2026_07_28"),
    ],
    ids=["profile-key", "profile-table", "profile-path", "sandbox-value", "feature-value"],
)  # fmt: skip
def test_a_config_codex_refuses_is_one_line(
    tmp_path: Path, top: str, options: tuple[str, ...], said: str
) -> None:
    """What Codex 0.171 refuses to start with (checked with the CLI), doctor refuses too."""
    config = write_codex_config(tmp_path / "codex", top + "\n" + NO_HINT)
    ran = doctor(tmp_path, "--config", str(config), *options)
    assert ran.code == 2 and len(ran.err.strip().splitlines()) == 1, ran.err
    assert said in ran.err, ran.err


# -- fixes that fit the entry ----------------------------------------------------------------------


def test_a_url_server_that_wants_a_token_is_told_bearer_token_env_var(
    tmp_path: Path, launch_http: LaunchHttp
) -> None:
    url = launch_http("--bearer-token", "doctor-test-token")
    code, server = only_server(tmp_path, f"[mcp_servers.web]\nurl = {toml_string(url)}\n")
    assert code == 1
    finding = next(f for f in server["findings"] if f["severity"] == "lost")
    assert "bearer_token_env_var" in finding["fix"] and "by hand" not in finding["fix"], finding


def _gateway(tmp_path: Path, children: dict[str, Any]) -> str:
    mcp_json = tmp_path / "gw.mcp.json"
    mcp_json.write_text(json.dumps({"mcpServers": children}))
    return (
        "[mcp_servers.gw]\n"
        f"command = {toml_string(CODEX_MCP)}\n"
        f"env = {{ CODEX_MCP_WRAPPER_CONFIG = {toml_string(str(mcp_json))} }}\n"
    )


def _child(*args: str) -> dict[str, Any]:
    return {"command": PY, "args": [BROKEN_SERVER, *args]}


def test_a_2020_12_schema_direct_is_told_the_gateway_repairs_it(tmp_path: Path) -> None:
    tool = {"name": "contact", "inputSchema": SCHEMA_2020_12, "annotations": {"readOnlyHint": True}}
    entry = broken_entry("brk", "--tools", "none", "--custom-tools", json.dumps([tool]))
    _, server = only_server(tmp_path, entry)
    lowered = rules(server)["lowered"]
    assert lowered["tools"] == ["contact"] and "gateway" in lowered["fix"], lowered


def test_through_the_gateway_codex_gets_typed_branches_and_no_gateway_advice(
    tmp_path: Path,
) -> None:
    """The gateway gives each anyOf/allOf branch the type of the object it constrains, so Codex
    lowers nothing; and a finding about a gateway entry never says "serve it through the
    gateway" (it said so while Codex still received the untyped branches)."""
    tool = {"name": "contact", "inputSchema": SCHEMA_2020_12, "annotations": {"readOnlyHint": True}}
    children = {"brk": _child("--tools", "none", "--custom-tools", json.dumps([tool]))}
    _, server = only_server(tmp_path, _gateway(tmp_path, children))
    assert server["status"] == "ok", server
    kept = {t["tool"]: t["status"] for t in server["tools"]}
    assert kept["brk__contact"] == "kept", server
    for finding in server["findings"]:
        assert "through the gateway" not in (finding["fix"] or ""), finding


# -- the summary agrees with the exit status ------------------------------------------------------


@pytest.mark.slow
def test_a_gateway_child_that_cannot_start_is_lost_in_the_summary_too(tmp_path: Path) -> None:
    children = {
        "good": _child("--tools", "echo"),
        "dies": _child("--exit-on-start", "3"),
        "nowhere": {"command": "mcp-server-nowhere-to-be-found"},
    }
    config = write_codex_config(tmp_path / "codex", _gateway(tmp_path, children))
    env = bare_env(tmp_path / "home")
    ran = doctor(tmp_path, "--config", str(config), "--json", env=env)
    document = ran.json()
    assert ran.code == 1 == document["exitCode"]
    assert document["summary"]["gatewayChildrenLost"] == 2, document["summary"]
    (server,) = document["servers"]
    found = {f["rule"]: f for f in server["findings"] if f["severity"] == "lost"}
    assert "'nowhere'" in found["gateway-child-not-found"]["message"]
    down = found["gateway-child-down"]
    assert "'dies'" in down["message"] and "exit" in down["message"].lower(), down
    text = doctor(tmp_path, "--config", str(config), env=env).out
    summary = text.strip().splitlines()[-1]
    assert "2 gateway child server(s) Codex will not get" in summary, summary


def test_the_summary_line_says_what_made_the_exit_status(tmp_path: Path) -> None:
    entry = '[mcp_servers.offpath]\ncommand = "mcp-server-nowhere-to-be-found"\n'
    config = write_codex_config(tmp_path / "codex", entry)
    ran = doctor(tmp_path, "--config", str(config))
    assert ran.code == 1 and "1 server(s) Codex cannot use" in ran.out.splitlines()[-1]
