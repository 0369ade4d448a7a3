"""A Codex config.toml that is wrong in every way we could think of, and servers that misbehave
while doctor starts them: a clear one-line error (exit 2) or a finding (exit 1), never a
traceback, never a wait without end. Written before `codex-mcp doctor` (hostile-input.md)."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from .doctor_helpers import CODEX_MCP, Ran, broken_entry, doctor, toml_string, write_codex_config


def _one_line_error(ran: Ran) -> str:
    assert ran.code == 2, (ran.code, ran.out, ran.err)
    assert "Traceback" not in ran.err and ran.out == ""
    lines = ran.err.strip().splitlines()
    assert len(lines) == 1, ran.err
    assert lines[0].startswith("codex-mcp doctor: ")
    return lines[0]


def _config_error(tmp_path: Path, text: str) -> str:
    config = write_codex_config(tmp_path / "codex", text)
    return _one_line_error(doctor(tmp_path, "--config", str(config)))


def test_no_config_file_says_where_it_looked(tmp_path: Path) -> None:
    line = _one_line_error(doctor(tmp_path, "--codex-home", str(tmp_path / "nowhere")))
    assert str(tmp_path / "nowhere" / "config.toml") in line
    assert "--config" in line  # what to do


def test_not_toml(tmp_path: Path) -> None:
    line = _config_error(tmp_path, "[mcp_servers.x\ncommand = = 3\n")
    assert "not valid TOML" in line and "line 1" in line


def test_not_utf8(tmp_path: Path) -> None:
    config = tmp_path / "codex" / "config.toml"
    config.parent.mkdir()
    config.write_bytes(b'[mcp_servers.x]\ncommand = "\xff\xfe"\n')
    assert "UTF-8" in _one_line_error(doctor(tmp_path, "--config", str(config)))


def test_a_huge_file_is_not_read_whole(tmp_path: Path) -> None:
    text = "# padding\n" * 600_000  # 6 MB
    assert "over the limit" in _config_error(tmp_path, text)


def test_deep_nesting(tmp_path: Path) -> None:
    line = _config_error(tmp_path, "x = " + "[" * 50_000 + "]" * 50_000 + "\n")
    assert "config.toml" in line


@pytest.mark.parametrize(
    ("text", "where"),
    [
        ("mcp_servers = 3\n", "mcp_servers"),
        ("mcp_servers = [1, 2]\n", "mcp_servers"),
        ("[mcp_servers]\ntime = 3\n", "mcp_servers.time"),
        ("[mcp_servers.time]\ncommand = 3\n", "mcp_servers.time.command"),
        ('[mcp_servers.time]\ncommand = ["uvx"]\n', "mcp_servers.time.command"),
        (
            '[mcp_servers.time]\ncommand = "uvx"\nargs = "mcp-server-time"\n',
            "mcp_servers.time.args",
        ),
        ('[mcp_servers.time]\ncommand = "uvx"\nargs = ["a", 2]\n', "mcp_servers.time.args.1"),
        ('[mcp_servers.time]\ncommand = "uvx"\nenv = ["A=1"]\n', "mcp_servers.time.env"),
        ('[mcp_servers.time]\ncommand = "uvx"\nenv = { A = 1 }\n', "mcp_servers.time.env.A"),
        ('[mcp_servers.time]\ncommand = "uvx"\nenv_vars = [1]\n', "mcp_servers.time.env_vars.0"),
        ('[mcp_servers.time]\ncommand = "uvx"\ncwd = 5\n', "mcp_servers.time.cwd"),
        (
            '[mcp_servers.time]\ncommand = "uvx"\nstartup_timeout_sec = "10"\n',
            "mcp_servers.time.startup_timeout_sec",
        ),
        (
            '[mcp_servers.time]\ncommand = "uvx"\nstartup_timeout_sec = -1\n',
            "mcp_servers.time.startup_timeout_sec",
        ),
        (
            '[mcp_servers.time]\ncommand = "uvx"\nstartup_timeout_sec = nan\n',
            "mcp_servers.time.startup_timeout_sec",
        ),
        ('[mcp_servers.time]\ncommand = "uvx"\nenabled = "yes"\n', "mcp_servers.time.enabled"),
        (
            '[mcp_servers.time]\ncommand = "uvx"\nenabled_tools = "get_time"\n',
            "mcp_servers.time.enabled_tools",
        ),
        (
            '[mcp_servers.time]\ncommand = "uvx"\ndisabled_tools = [{}]\n',
            "mcp_servers.time.disabled_tools.0",
        ),
        ("[mcp_servers.time]\nurl = 8080\n", "mcp_servers.time.url"),
        (
            '[mcp_servers.time]\nurl = "http://127.0.0.1:1/mcp"\nbearer_token_env_var = 1\n',
            "mcp_servers.time.bearer_token_env_var",
        ),
        ('[mcp_servers.time]\nargs = ["x"]\n', "mcp_servers.time"),  # neither command nor url
        (
            '[mcp_servers.time]\ncommand = "uvx"\nurl = "http://127.0.0.1:1/mcp"\n',
            "mcp_servers.time",
        ),
    ],
)
def test_wrong_types_at_every_level(tmp_path: Path, text: str, where: str) -> None:
    line = _config_error(tmp_path, text)
    assert f"{where}:" in line, line
    assert "Codex" in line  # says Codex refuses the file too


def test_garbage_on_stdout_costs_no_traceback(tmp_path: Path) -> None:
    config = write_codex_config(
        tmp_path / "codex", broken_entry("noisy", "--garbage", "--tools", "echo")
    )
    ran = doctor(tmp_path, "--config", str(config))
    assert ran.code in (0, 1) and "Traceback" not in ran.err + ran.out
    assert "noisy" in ran.out


@pytest.mark.slow
def test_a_server_that_never_answers_is_timed_out(tmp_path: Path) -> None:
    entry = broken_entry("mute", "--slow-init", "3600", startup_timeout_sec="0.5")
    config = write_codex_config(tmp_path / "codex", entry)
    started = time.monotonic()
    ran = doctor(tmp_path, "--config", str(config), "--max-wait", "1")
    assert time.monotonic() - started < 30
    assert ran.code == 1 and "Traceback" not in ran.err + ran.out
    assert "startup_timeout_sec" in ran.out and "mute" in ran.out


def test_a_server_that_exits_at_once(tmp_path: Path) -> None:
    config = write_codex_config(tmp_path / "codex", broken_entry("gone", "--exit-on-start", "3"))
    ran = doctor(tmp_path, "--config", str(config))
    assert ran.code == 1 and "Traceback" not in ran.err + ran.out
    assert "gone" in ran.out and "exit" in ran.out


def test_a_broken_mcp_json_behind_the_gateway(tmp_path: Path) -> None:
    broken = tmp_path / "broken.mcp.json"
    broken.write_text('{"mcpServers": {"x": {"command": 3}}')
    entry = (
        "[mcp_servers.gateway]\n"
        f"command = {toml_string(CODEX_MCP)}\n"
        f"env = {{ CODEX_MCP_WRAPPER_CONFIG = {toml_string(str(broken))} }}\n"
    )
    config = write_codex_config(tmp_path / "codex", entry)
    ran = doctor(tmp_path, "--config", str(config))
    assert ran.code == 1 and "Traceback" not in ran.err + ran.out
    assert "broken.mcp.json" in ran.out


@pytest.mark.slow
def test_what_a_server_writes_cannot_drive_the_terminal(tmp_path: Path) -> None:
    evil = [{"name": "evil\x1b[2Jname", "inputSchema": {"type": "object"}}]
    entry = broken_entry("evil", "--tools", "none", "--custom-tools", json.dumps(evil))
    stderr = "printf 'dying\\033[2Jnow' >&2; exit 3"
    entry += f'[mcp_servers.dies]\ncommand = "sh"\nargs = ["-c", {toml_string(stderr)}]\n'
    config = write_codex_config(tmp_path / "codex", entry)
    ran = doctor(tmp_path, "--config", str(config))
    assert ran.code == 1 and "\x1b" not in ran.out and "evil\\x1b[2Jname" in ran.out
    assert "dying\\x1b[2Jnow" in ran.out
    document = doctor(tmp_path, "--config", str(config), "--json").json()
    assert document["servers"][0]["tools"][0]["tool"] == "evil\x1b[2Jname"  # JSON escapes it


def test_a_server_name_codex_refuses(tmp_path: Path) -> None:
    entry = broken_entry('"my.server"', "--tools", "echo")
    config = write_codex_config(tmp_path / "codex", entry)
    ran = doctor(tmp_path, "--config", str(config))
    assert ran.code == 1 and "Traceback" not in ran.err + ran.out
    assert "my.server" in ran.out and "[a-zA-Z0-9_-]" in ran.out


def test_a_usage_mistake_is_exit_2(tmp_path: Path) -> None:
    ran = doctor(tmp_path, "--no-such-option")
    assert ran.code == 2 and "Traceback" not in ran.err
