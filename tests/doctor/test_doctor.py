"""`codex-mcp doctor` against Codex configs naming real servers: a good one (our cmd/mcp), one
whose command is off Codex's PATH, one too slow for its startup timeout, one with tools Codex
drops: each named with its fix; the --json shape; exit codes; findings grouped; the entry's
enabled_tools/disabled_tools; a gateway entry's .mcp.json; `--print-codex-config`'s warning."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest
from codex_mcp.doctor.codex_launch import codex_path, find_command, server_environment
from oauth_fake import OAuthFake

from .doctor_helpers import (
    BROKEN_SERVER,
    CMD_MCP,
    CODEX_MCP,
    PY,
    bare_env,
    broken_entry,
    doctor,
    toml_list,
    toml_string,
    write_codex_config,
)

GOOD = f"[mcp_servers.good]\ncommand = {toml_string(PY)}\nargs = {toml_list([CMD_MCP])}\n"
OFF_PATH = '[mcp_servers.offpath]\ncommand = "mcp-server-nowhere-to-be-found"\n'
SLOW = broken_entry("slow", "--slow-init", "2", "--tools", "echo", startup_timeout_sec="1")
DROPS = broken_entry("brk", "--tools", "echo,null_root,no_annotations,not_read_only")


def servers(document: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {s["name"]: s for s in document["servers"]}


def finding(server: dict[str, Any], rule: str) -> dict[str, Any]:
    (found,) = [f for f in server["findings"] if f["rule"] == rule]
    return found


@pytest.mark.slow
def test_each_server_named_with_its_fix(tmp_path: Path) -> None:
    config = write_codex_config(tmp_path / "codex", GOOD + OFF_PATH + SLOW + DROPS)
    ran = doctor(tmp_path, "--config", str(config), "--json")
    assert ran.code == 1, ran.err
    document = ran.json()
    by_name = servers(document)

    good = by_name["good"]
    assert good["status"] == "ok"
    assert {t["codexName"] for t in good["tools"]} == {"mcp__good__echo", "mcp__good__sleep"}
    assert not [f for f in good["findings"] if f["severity"] == "lost"]

    off = by_name["offpath"]
    assert off["tools"] == []
    assert off["status"] == "not startable"
    lost = finding(off, "not-startable")
    assert "not on Codex's PATH" in lost["message"] and document["path"]["value"] in lost["message"]
    assert "absolute path in `command`" in lost["fix"]

    slow = by_name["slow"]
    assert slow["status"] == "too slow" and slow["seconds"] > 1
    too_slow = finding(slow, "too-slow")
    assert "startup_timeout_sec (1 s)" in too_slow["message"]
    assert too_slow["fix"].startswith("set startup_timeout_sec = ")
    assert int(too_slow["fix"].split("= ")[1].split()[0]) > slow["seconds"]
    assert [t["status"] for t in slow["tools"]] == ["lost with its server"]

    brk = by_name["brk"]
    tools = {t["tool"]: t for t in brk["tools"]}
    assert tools["null_root"]["status"] == "dropped" and tools["null_root"]["codexName"] is None
    assert tools["echo"]["codexName"] == "mcp__brk__echo"
    dropped = finding(brk, "dropped")
    assert dropped["tools"] == ["null_root"] and "gateway" in dropped["fix"]
    approval = finding(brk, "needs-approval")  # one finding for both tools: grouped
    assert approval["tools"] == ["no_annotations", "not_read_only"] and approval["fix"]

    assert document["summary"]["lost"] == 2  # slow's echo and brk's null_root
    assert document["exitCode"] == 1


def test_json_shape(tmp_path: Path) -> None:
    config = write_codex_config(tmp_path / "codex", broken_entry("brk", "--tools", "echo"))
    document = doctor(tmp_path, "--config", str(config), "--json").json()
    assert set(document) == {
        "schema", "config", "path", "exitCode", "summary", "servers", "mcpSkills",
    }  # fmt: skip
    assert document["mcpSkills"] == []  # none synced into Codex's folder (tests/trust)
    assert document["schema"] == "codex-mcp-doctor/1"
    assert document["config"] == str(config)
    assert set(document["path"]) == {"value", "origin"}
    assert set(document["summary"]) == {
        "servers", "started", "disabled", "tools", "kept", "changed", "filtered", "lost",
        "gatewayChildrenLost",
    }  # fmt: skip
    (server,) = document["servers"]
    assert set(server) == {
        "name", "transport", "target", "status", "startupTimeoutSec", "toolTimeoutSec",
        "seconds", "findings", "tools", "skills",
    }  # fmt: skip
    assert server["skills"] == []  # it declares no skills (tests/doctor/test_doctor_skills.py)
    assert server["startupTimeoutSec"] == 30 and server["toolTimeoutSec"] == 300  # Codex's
    assert server["transport"] == "stdio" and server["target"] == PY
    assert server["tools"] == [{"tool": "echo", "codexName": "mcp__brk__echo", "status": "kept"}]


def test_nothing_lost_is_exit_0(tmp_path: Path) -> None:
    config = write_codex_config(tmp_path / "codex", GOOD)
    ran = doctor(tmp_path, "--config", str(config))
    assert ran.code == 0, ran.out + ran.err
    assert "good" in ran.out and "mcp__good__echo" in ran.out


def test_only_the_servers_asked_for(tmp_path: Path) -> None:
    config = write_codex_config(tmp_path / "codex", GOOD + OFF_PATH)
    assert doctor(tmp_path, "--config", str(config), "--server", "good").code == 0
    ran = doctor(tmp_path, "--config", str(config), "--server", "nope")
    assert ran.code == 2 and "nope" in ran.err and len(ran.err.splitlines()) == 1


def test_codex_home_and_its_default(tmp_path: Path) -> None:
    write_codex_config(tmp_path / "home" / ".codex", GOOD)
    assert doctor(tmp_path).code == 0  # ~/.codex/config.toml
    write_codex_config(tmp_path / "elsewhere", OFF_PATH)
    env = bare_env(tmp_path / "home", CODEX_HOME=str(tmp_path / "elsewhere"))
    assert doctor(tmp_path, env=env).code == 1  # $CODEX_HOME wins
    assert doctor(tmp_path, "--codex-home", str(tmp_path / "home" / ".codex")).code == 0


def test_a_repeated_finding_is_one_line_naming_the_tools(tmp_path: Path) -> None:
    config = write_codex_config(tmp_path / "codex", DROPS)
    ran = doctor(tmp_path, "--config", str(config))
    assert ran.code == 1
    lines = [line for line in ran.out.splitlines() if "needs-approval" in line]
    assert len(lines) == 1 and "[no_annotations, not_read_only]" in lines[0]


def test_enabled_and_disabled_tools_are_applied(tmp_path: Path) -> None:
    entry = broken_entry(
        "brk",
        "--tools",
        "echo,null_root,dash-name",
        enabled_tools=toml_list(["echo", "dash-name", "ghost"]),
        disabled_tools=toml_list(["dash-name"]),
    )
    config = write_codex_config(tmp_path / "codex", entry)
    ran = doctor(tmp_path, "--config", str(config), "--json")
    assert ran.code == 0, ran.out  # the dropped tool is filtered out first: nothing lost
    (server,) = ran.json()["servers"]
    status = {t["tool"]: t["status"] for t in server["tools"]}
    assert status == {"echo": "kept", "null_root": "filtered", "dash-name": "filtered"}
    assert finding(server, "filtered")["tools"] == ["null_root", "dash-name"]
    assert finding(server, "unknown-tool")["tools"] == ["ghost"]


def test_a_disabled_server_is_not_started(tmp_path: Path) -> None:
    config = write_codex_config(tmp_path / "codex", OFF_PATH + "enabled = false\n")
    ran = doctor(tmp_path, "--config", str(config), "--json")
    assert ran.code == 0 and ran.json()["servers"][0]["status"] == "disabled"


def test_a_command_only_in_the_active_virtualenv(tmp_path: Path) -> None:
    venv_bin = tmp_path / "venv" / "bin"
    venv_bin.mkdir(parents=True)
    script = venv_bin / "venv-only-server"
    script.write_text(f"#!/bin/sh\nexec {PY} {BROKEN_SERVER} --tools echo\n")
    script.chmod(0o755)
    env = bare_env(tmp_path / "home", VIRTUAL_ENV=str(venv_bin.parent))
    env["PATH"] = f"{venv_bin}{os.pathsep}{env['PATH']}"
    config = write_codex_config(
        tmp_path / "codex", '[mcp_servers.v]\ncommand = "venv-only-server"\n'
    )
    ran = doctor(tmp_path, "--config", str(config), "--json", env=env)
    assert ran.code == 1
    document = ran.json()
    assert str(venv_bin) not in document["path"]["value"].split(os.pathsep)
    assert "virtualenv" in document["path"]["origin"]
    assert str(script) in finding(document["servers"][0], "not-startable")["fix"]
    given = doctor(tmp_path, "--config", str(config), "--path", str(venv_bin), env=env)
    assert given.code == 0, given.out  # the PATH Codex is started with, when the user says


def test_an_http_entry_without_its_token(tmp_path: Path) -> None:
    entry = (
        '[mcp_servers.web]\nurl = "http://127.0.0.1:9/mcp"\n'
        'bearer_token_env_var = "DOCTOR_TEST_TOKEN_NEVER_SET"\nrequired = true\n'
    )
    config = write_codex_config(tmp_path / "codex", entry)
    ran = doctor(tmp_path, "--config", str(config), "--json")
    assert ran.code == 1
    (server,) = ran.json()["servers"]
    assert server["transport"] == "http" and server["status"] == "not startable"
    message = server["findings"][0]["message"]
    assert "DOCTOR_TEST_TOKEN_NEVER_SET is not set" in message
    assert "`codex exec` stops with an error" in message  # required = true


async def test_an_oauth_server_needs_login(aiohttp_server: Any, tmp_path: Path) -> None:
    server = await aiohttp_server(OAuthFake().app(), host="127.0.0.1")
    entry = f"[mcp_servers.remote]\nurl = {toml_string(str(server.make_url('/mcp')))}\n"
    config = write_codex_config(tmp_path / "codex", entry)
    process = await asyncio.create_subprocess_exec(
        PY, CMD_MCP, "doctor", "--config", str(config), "--json",
        env=bare_env(tmp_path / "home"), cwd=tmp_path, stdout=subprocess.PIPE,
    )  # fmt: skip
    out, _ = await asyncio.wait_for(process.communicate(), 60)
    assert process.returncode == 1
    (remote,) = json.loads(out)["servers"]
    assert remote["status"] == "needs login"
    assert finding(remote, "needs-login")["fix"].startswith("run `codex mcp login remote`")


def test_a_gateway_child_off_codex_path(tmp_path: Path) -> None:
    mcp_json = tmp_path / "gw.mcp.json"
    children = {
        "echo": {"command": PY, "args": [str(Path(CMD_MCP))]},
        "nowhere": {"command": "mcp-server-nowhere-to-be-found"},
        "time": {
            "command": "mcp-server-time"
        },  # in the venv only (the README names it by its absolute path)
    }
    mcp_json.write_text(json.dumps({"mcpServers": children}))
    entry = (
        "[mcp_servers.gateway]\n"
        f"command = {toml_string(CODEX_MCP)}\n"
        f"env = {{ CODEX_MCP_WRAPPER_CONFIG = {toml_string(str(mcp_json))} }}\n"
    )
    config = write_codex_config(tmp_path / "codex", entry)
    env = bare_env(tmp_path / "home")
    venv_bin = str(Path(CODEX_MCP).parent)  # as when Codex is started outside the venv
    env["PATH"] = os.pathsep.join(d for d in env["PATH"].split(os.pathsep) if d != venv_bin)
    ran = doctor(tmp_path, "--config", str(config), "--json", env=env)
    assert ran.code == 1, ran.err
    (server,) = ran.json()["servers"]
    assert server["status"] == "ok"
    nowhere, time = [f for f in server["findings"] if f["rule"] == "gateway-child-not-found"]
    assert "'nowhere'" in nowhere["message"] and "not on Codex's PATH" in nowhere["message"]
    assert "absolute path" in nowhere["fix"]
    assert "'time'" in time["message"]  # found next to the gateway, named in the fix:
    assert time["fix"].endswith(f'command = "{Path(CODEX_MCP).parent / "mcp-server-time"}"')


def _print_codex_config(tmp_path: Path, mcp_json: Path) -> subprocess.CompletedProcess[str]:
    env = bare_env(tmp_path / "home", CODEX_MCP_WRAPPER_CONFIG=str(mcp_json))
    return subprocess.run(
        [PY, CMD_MCP, "--print-codex-config"],
        env=env,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_print_codex_config_warns_about_a_child_off_path(tmp_path: Path) -> None:
    mcp_json = tmp_path / ".mcp.json"
    children = {
        "good": {"command": PY, "args": [CMD_MCP]},
        "nowhere": {"command": "mcp-server-nowhere-to-be-found"},
    }
    mcp_json.write_text(json.dumps({"mcpServers": children}))
    printed = _print_codex_config(tmp_path, mcp_json)
    assert printed.returncode == 0 and "[mcp_servers.codex-mcp]" in printed.stdout
    warnings = printed.stderr.strip().splitlines()
    assert len(warnings) == 1, printed.stderr
    assert "nowhere" in warnings[0] and "not on Codex's PATH" in warnings[0]


def test_print_codex_config_refuses_a_broken_mcp_json(tmp_path: Path) -> None:
    mcp_json = tmp_path / ".mcp.json"
    mcp_json.write_text('{"mcpServers": {"x": {"command": 3}}}')
    printed = _print_codex_config(tmp_path, mcp_json)
    assert printed.returncode == 2 and printed.stdout == ""
    assert len(printed.stderr.strip().splitlines()) == 1 and "Traceback" not in printed.stderr


# -- the launch rule, in process ----------------------------------------------------------


def test_codex_passes_only_its_default_variables_and_env_vars() -> None:
    environ = {"HOME": "/h", "PATH": "/p", "SECRET": "s", "LANG": "C", "EXTRA": "e"}
    env = server_environment(environ, "/codex/bin", ["EXTRA", "UNSET"], {"TZ": "UTC"})
    assert env == {"HOME": "/h", "PATH": "/codex/bin", "LANG": "C", "EXTRA": "e", "TZ": "UTC"}
    assert server_environment(environ, "/p", (), {"PATH": "/mine"})["PATH"] == "/mine"


def test_codex_path_drops_only_the_active_virtualenv(tmp_path: Path) -> None:
    plain = codex_path({"PATH": "/a:/b"})
    assert plain.value == "/a:/b" and plain.origin == "this shell's"
    venv = codex_path({"PATH": "/v/bin:/a", "VIRTUAL_ENV": "/v"})
    assert venv.value == "/a" and "/v/bin" in venv.origin
    assert codex_path({"PATH": "/v/bin"}, "/given").value == "/given"


def test_find_command(tmp_path: Path) -> None:
    tool = tmp_path / "tool"
    tool.write_text("#!/bin/sh\n")
    tool.chmod(0o755)
    assert find_command("tool", str(tmp_path), None) == str(tool)
    assert find_command("tool", "/nonexistent", None) is None
    assert find_command("tool", "", None) is None
    assert find_command("./tool", None, tmp_path) == str(tmp_path / "./tool")
    assert find_command(str(tool), None, None) == str(tool)
