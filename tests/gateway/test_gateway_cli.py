"""The gateway's command line: `codex-mcp` with no config serves its built-in tools (and
imports nothing it does not need), `--` wraps one server, `lint` is a subcommand,
`--print-codex-config` prints an entry the real Codex CLI reads, and a bad config is one
clear error before anything starts."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import tomllib
from pathlib import Path

import pytest
from codex_mcp.client import Client

from .codex_harness import CODEX
from .gateway_helpers import (
    BROKEN,
    CMD_HTTP,
    CMD_MCP,
    PY,
    gateway_env,
    launch_http,
    stdio,
    stop,
    write_config,
)

INITIALIZE = json.dumps(
    {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}},
    }
)  # fmt: skip


def _bare_env(home: Path) -> dict[str, str]:
    """No config anywhere: a fresh HOME, nothing set."""
    return gateway_env(None, HOME=str(home))


async def test_no_config_serves_the_built_in_tools(tmp_path: Path) -> None:
    client = Client.stdio([PY, CMD_MCP], env=_bare_env(tmp_path), cwd=tmp_path)
    async with client:
        assert {tool.name for tool in await client.list_tools()} == {"echo", "sleep"}


def test_no_config_imports_neither_the_client_nor_pydantic_settings(tmp_path: Path) -> None:
    process = subprocess.run(
        [PY, "-X", "importtime", CMD_MCP],
        input=INITIALIZE + "\n",
        env=_bare_env(tmp_path),
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert '"serverInfo"' in process.stdout
    imported = {line.split("|")[-1].strip() for line in process.stderr.splitlines() if "|" in line}
    assert "codex_mcp.gateway.config" in imported  # discovery ran
    heavy_modules = ("aiohttp", "codex_mcp.client", "pydantic_settings", "codex_mcp.gateway.serve")
    for heavy in (
        *heavy_modules,
        "codex_mcp.gateway.config.model",
        "codex_mcp.gateway.routing.naming",
    ):
        assert heavy not in imported, heavy


def test_a_gateway_of_stdio_children_does_not_import_aiohttp(tmp_path: Path) -> None:
    config = write_config(tmp_path, {"brk": stdio(BROKEN, "--tools", "echo")})
    process = subprocess.run(
        [PY, "-X", "importtime", CMD_MCP],
        input=INITIALIZE + "\n",
        env=gateway_env(config, HOME=str(tmp_path)),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert '"serverInfo"' in process.stdout
    imported = {line.split("|")[-1].strip() for line in process.stderr.splitlines() if "|" in line}
    assert "codex_mcp.client.transports.stdio" in imported  # it relays...
    assert "aiohttp" not in imported  # ...with no HTTP client to load (~150 ms)


async def test_a_config_in_the_working_directory_is_found(tmp_path: Path) -> None:
    write_config(tmp_path, {"brk": stdio(BROKEN, "--tools", "echo")})
    project = tmp_path / "project" / "src"
    project.mkdir(parents=True)
    client = Client.stdio([PY, CMD_MCP], env=_bare_env(tmp_path / "home"), cwd=project)
    async with client:
        assert [tool.name for tool in await client.list_tools()] == ["brk__echo", "gateway_status"]


async def test_a_codex_mcp_child_does_not_become_a_gateway_again(tmp_path: Path) -> None:
    # A plain `codex-mcp` listed in the very config it would find (here by the inherited
    # CODEX_MCP_WRAPPER_CONFIG, and by its working directory) serves its built-ins: it must
    # not become a gateway starting itself again, and so on.
    config = write_config(tmp_path, {"builtin": {"command": PY, "args": [CMD_MCP]}})
    client = Client.stdio(
        [PY, CMD_MCP],
        env=gateway_env(config, HOME=str(tmp_path), WRAPPER_INIT_TIMEOUT_MS="20000"),
        cwd=tmp_path,
    )
    async with client:
        names = [tool.name for tool in await client.list_tools()]
    assert names == ["builtin__echo", "builtin__sleep", "gateway_status"]


async def test_a_child_given_a_config_of_its_own_is_a_gateway(tmp_path: Path) -> None:
    inner_dir = tmp_path / "inner"
    inner_dir.mkdir()
    inner = write_config(inner_dir, {"brk": stdio(BROKEN, "--tools", "echo")})
    outer = write_config(
        tmp_path,
        {
            "nested": {
                "command": PY,
                "args": [CMD_MCP],
                "env": {"CODEX_MCP_WRAPPER_CONFIG": str(inner)},
            }
        },
    )
    async with Client.stdio([PY, CMD_MCP], env=gateway_env(outer, HOME=str(tmp_path))) as client:
        names = [tool.name for tool in await client.list_tools()]
        assert names == ["nested__brk__echo", "nested__gateway_status", "gateway_status"]
        assert (await client.call_tool("nested__brk__echo", {"message": "deep"})).text == "deep"


async def test_passthrough_wraps_one_server_under_its_own_names(tmp_path: Path) -> None:
    command = [PY, CMD_MCP, "--", *BROKEN, "--tools", "echo,dash-name"]
    async with Client.stdio(command, env=_bare_env(tmp_path), cwd=tmp_path) as client:
        names = [tool.name for tool in await client.list_tools()]
        assert names == ["echo", "dash_name", "gateway_status"]
        assert (await client.call_tool("dash_name", {})).text == "dash-name ran"


@pytest.mark.parametrize(
    ("command", "status", "says"),
    [
        ("no-such-mcp-server-anywhere", 127, "command not found. Check PATH"),
        ("./missing/server.py", 127, "no such file './missing/server.py'. Check the path"),
        ("not-executable.py", 126, "permission denied. Check that"),
    ],
)
def test_passthrough_of_a_command_that_cannot_run_exits_saying_so(
    tmp_path: Path, command: str, status: int, says: str
) -> None:
    """The one wrapped server cannot start: one line and a shell's status, not a gateway
    serving nothing but gateway_status while it retries for ever."""
    (tmp_path / "not-executable.py").write_text("print('hi')\n")
    if command == "not-executable.py":
        command = str(tmp_path / command)
    for program in (CMD_MCP, CMD_HTTP):
        process = subprocess.run(
            [PY, program, "--", command, "--flag"],
            input="",
            env=_bare_env(tmp_path),
            cwd=tmp_path,
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert process.returncode == status, process.stderr
        [line] = process.stderr.splitlines()
        assert says in line and repr(command) in line, line
        assert process.stdout == ""


async def test_codex_mcp_http_wraps_one_server_too(tmp_path: Path) -> None:
    process, url = launch_http("--", *BROKEN, "--tools", "echo", env=_bare_env(tmp_path))
    try:
        async with Client.http(url) as client:
            assert [tool.name for tool in await client.list_tools()] == ["echo", "gateway_status"]
            assert (await client.call_tool("echo", {"message": "over http"})).text == "over http"
    finally:
        stop(process)


def test_lint_is_a_subcommand(tmp_path: Path) -> None:
    good = subprocess.run(
        [PY, CMD_MCP, "lint", "--", *BROKEN, "--tools", "echo"],
        env=_bare_env(tmp_path),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert good.returncode == 0, good.stderr
    assert "1 tool(s) on 1 server(s)" in good.stdout
    lossy = subprocess.run(
        [PY, CMD_MCP, "lint", "--json", "--", *BROKEN, "--tools", "echo,null_root"],
        env=_bare_env(tmp_path),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert lossy.returncode == 1
    assert json.loads(lossy.stdout)["summary"]["lost"] == 1


@pytest.mark.parametrize("command", [CMD_MCP, CMD_HTTP])
def test_a_bad_config_is_one_clear_error(tmp_path: Path, command: str) -> None:
    (tmp_path / ".mcp.json").write_text('{"mcpServers": {"time": {"command": 5}}}')
    process = subprocess.run(
        [PY, command],
        input="",
        env=_bare_env(tmp_path / "home"),
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert process.returncode == 2
    name = Path(command).name
    expected = f'codex-mcp{"-http" if name == "http" else ""}: {tmp_path / ".mcp.json"}: mcpServers.time: "command" must be a string, not a number'
    assert process.stderr.strip() == expected


def _printed(tmp_path: Path, *args: str) -> str:
    process = subprocess.run(
        [PY, CMD_MCP, "--print-codex-config", *args],
        env=_bare_env(tmp_path / "home"),
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert process.returncode == 0, process.stderr
    return process.stdout


def test_print_codex_config(tmp_path: Path) -> None:
    config = write_config(tmp_path, {"brk": stdio(BROKEN, "--tools", "echo")})
    printed = _printed(tmp_path)
    toml_part, _, add_part = printed.partition("# Or, with the Codex CLI:")
    entry = tomllib.loads(toml_part)["mcp_servers"]["codex-mcp"]
    assert entry["command"] == PY and entry["args"] == [CMD_MCP]
    assert entry["env"] == {"CODEX_MCP_WRAPPER_CONFIG": str(config)}
    assert entry["required"] is True
    add = shlex.split(add_part.strip())
    assert add[:4] == ["codex", "mcp", "add", "codex-mcp"]
    assert add[add.index("--") + 1 :] == [PY, CMD_MCP]
    passthrough = tomllib.loads(_printed(tmp_path, "--", "uvx", "mcp-server-time").split("# Or")[0])
    assert passthrough["mcp_servers"]["codex-mcp"]["args"] == [
        CMD_MCP,
        "--",
        "uvx",
        "mcp-server-time",
    ]
    assert "env" not in passthrough["mcp_servers"]["codex-mcp"]


@pytest.mark.interop
@pytest.mark.skipif(not CODEX.exists(), reason="the Codex CLI is not installed (scripts/setup.sh)")
def test_the_real_codex_reads_both_printed_forms_alike(tmp_path: Path) -> None:
    write_config(tmp_path, {"brk": stdio(BROKEN, "--tools", "echo")})
    toml_part, _, add_part = _printed(tmp_path).partition("# Or, with the Codex CLI:")
    seen = []
    for form in ("toml", "add"):
        home = tmp_path / f"codex-{form}"
        home.mkdir()
        env = {**os.environ, "CODEX_HOME": str(home)}
        if form == "toml":
            (home / "config.toml").write_text(toml_part)
        else:
            add = shlex.split(add_part.strip())
            subprocess.run(
                [str(CODEX), *add[1:]], env=env, check=True, capture_output=True, timeout=60
            )
        listed = subprocess.run(
            [str(CODEX), "mcp", "list", "--json"],
            env=env,
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert listed.returncode == 0, listed.stderr
        [server] = json.loads(listed.stdout)
        seen.append((server["name"], server["transport"]))
    assert seen[0] == seen[1]
    assert seen[0][1]["command"] == PY and seen[0][1]["args"] == [CMD_MCP]


def test_print_codex_config_says_what_codex_mcp_add_cannot_set(tmp_path: Path) -> None:
    write_config(tmp_path, {"brk": stdio(BROKEN, "--tools", "echo")})
    toml_part = _printed(tmp_path).partition("# Or, with the Codex CLI:")[0]
    assert "`codex mcp add` cannot set required and startup_timeout_sec" in toml_part


def test_the_http_server_prints_a_url_entry(tmp_path: Path) -> None:
    write_config(tmp_path, {"brk": stdio(BROKEN, "--tools", "echo")})
    process = subprocess.run(
        [PY, CMD_HTTP, "--print-codex-config", "--port", "9123", "--base-path", "/tools"],
        env=_bare_env(tmp_path / "home"),
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert process.returncode == 0, process.stderr
    toml_part, _, add_part = process.stdout.partition("# Or, with the Codex CLI:")
    entry = tomllib.loads(toml_part)["mcp_servers"]["codex-mcp"]
    assert entry == {
        "url": "http://127.0.0.1:9123/tools/mcp",
        "required": True,
        "startup_timeout_sec": 30,
    }
    assert shlex.split(add_part.strip())[-2:] == ["--url", "http://127.0.0.1:9123/tools/mcp"]
