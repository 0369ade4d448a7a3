"""The real Codex CLI launches or connects to our server and calls a tool, offline.

Codex talks to a fake Responses API provider on 127.0.0.1 (no network, no API key); we
assert on the tools Codex offered the model and on the tool output it sent back.
"""

from __future__ import annotations

import asyncio
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from aiohttp import web
from support.processes import free_port

from .fake_responses_provider import ECHO_MESSAGE, FakeProvider, codex_config

if TYPE_CHECKING:
    from conftest import LaunchHttp

ROOT = Path(__file__).resolve().parents[2]
CODEX = ROOT / ".tools/npm/node_modules/.bin/codex"

pytestmark = [
    pytest.mark.interop,
    pytest.mark.skipif(not CODEX.exists(), reason="run .ci/node-tools.sh to install the Codex CLI"),
    pytest.mark.skipif(shutil.which("node") is None, reason="node is not on PATH"),
]


async def run_codex(
    tmp_path: Path,
    server_toml: str,
    env: dict[str, str] | None = None,
    flags: tuple[str, ...] = (),
) -> tuple[FakeProvider, str]:
    provider = FakeProvider()
    runner = web.AppRunner(provider.app)
    await runner.setup()
    port = free_port()
    await web.TCPSite(runner, "127.0.0.1", port).start()
    home = tmp_path / "codex-home"
    home.mkdir(parents=True)
    (home / "config.toml").write_text(
        codex_config(
            port,
            top='approval_policy = "never"\nsandbox_mode = "danger-full-access"\n',
            tables=server_toml,
        )
    )
    try:
        process = await asyncio.create_subprocess_exec(
            str(CODEX),
            "exec",
            *flags,
            "--strict-config",
            "--skip-git-repo-check",
            "Call the echo tool",
            cwd=tmp_path,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.STDOUT,
            env={
                **os.environ,
                "CODEX_HOME": str(home),
                "FAKE_PROVIDER_KEY": "not-a-real-key",
                **(env or {}),
            },
        )
        output, _ = await asyncio.wait_for(process.communicate(), 120)
        assert process.returncode == 0, output.decode()
        return provider, output.decode()
    finally:
        await runner.cleanup()


def assert_echo_called(provider: FakeProvider, server_name: str, output: str) -> None:
    namespaces = provider.tool_namespaces()
    assert "echo" in namespaces.get(f"mcp__{server_name}", []), (namespaces, output)
    outputs = provider.tool_outputs()
    assert len(outputs) == 1, output
    assert ECHO_MESSAGE in str(outputs[0]), outputs


async def test_codex_launches_our_stdio_server_and_calls_echo(tmp_path: Path) -> None:
    server = f"""
[mcp_servers.codexmcp]
command = "{sys.executable}"
args = ["{ROOT / "cmd/mcp"}"]
required = true
"""
    provider, output = await run_codex(tmp_path, server)
    assert_echo_called(provider, "codexmcp", output)


@pytest.fixture
def http_server(request: pytest.FixtureRequest, launch_http: LaunchHttp) -> str:
    return launch_http(*getattr(request, "param", []))


async def test_codex_calls_echo_over_http(tmp_path: Path, http_server: str) -> None:
    server = f"""
[mcp_servers.codexmcp]
url = "{http_server}"
required = true
"""
    provider, output = await run_codex(tmp_path, server)
    assert_echo_called(provider, "codexmcp", output)


@pytest.mark.parametrize("http_server", [["--bearer-token", "s3cret-token"]], indirect=True)
async def test_codex_calls_echo_over_http_with_a_bearer_token(
    tmp_path: Path, http_server: str
) -> None:
    server = f"""
[mcp_servers.codexmcp]
url = "{http_server}"
bearer_token_env_var = "CODEX_MCP_TEST_TOKEN"
required = true
"""
    provider, output = await run_codex(
        tmp_path, server, env={"CODEX_MCP_TEST_TOKEN": "s3cret-token"}
    )
    assert_echo_called(provider, "codexmcp", output)


async def test_codex_fails_without_the_token(tmp_path: Path) -> None:
    process = subprocess.Popen(
        [sys.executable, str(ROOT / "cmd/http"), "--port", "0", "--bearer-token", "s3cret-token"],
        stderr=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        text=True,
    )
    assert process.stderr is not None
    try:
        url = re.search(
            r"listening on (http://\S+)", "".join(process.stderr.readline() for _ in range(2))
        )
        assert url
        server = f'[mcp_servers.codexmcp]\nurl = "{url.group(1)}"\nrequired = true\n'
        with pytest.raises(AssertionError):
            await run_codex(tmp_path, server)  # required server refused: codex exits non-zero
    finally:
        process.terminate()
        process.wait(15)


async def test_codex_with_and_without_mcp_2026_07_28_against_one_server(
    tmp_path: Path, launch_http: LaunchHttp
) -> None:
    """One running HTTP server: Codex with `--enable mcp_2026_07_28` probes
    server/discover and calls our tool statelessly; without it, it initializes a
    2025-06-18 session as before."""
    url = launch_http("--serve", str(ROOT / "tests/interop/servers/era_echo.py"))
    server = f'[mcp_servers.codexmcp]\nurl = "{url}"\nrequired = true\n'
    modern, output = await run_codex(
        tmp_path / "modern", server, flags=("--enable", "mcp_2026_07_28")
    )
    assert_echo_called(modern, "codexmcp", output)
    assert "[stateless 2026-07-28]" in str(modern.tool_outputs()[0]), modern.tool_outputs()
    legacy, output = await run_codex(tmp_path / "legacy", server)
    assert_echo_called(legacy, "codexmcp", output)
    assert "[session 2025-06-18]" in str(legacy.tool_outputs()[0]), legacy.tool_outputs()


STDIO_2026_OPT_IN = "[features]\nmcp_2026_07_28 = true\n"


def _stdio_server_2026(args: list[str]) -> str:
    """A stdio `[mcp_servers.X]` entry that opts in to 2026-07-28: Codex reads the marker
    variable from the entry's `env` (and strips it before starting the child)."""
    quoted = ", ".join(f'"{arg}"' for arg in args)
    return f"""
[mcp_servers.codexmcp]
command = "{sys.executable}"
args = [{quoted}]
required = true
env = {{ CODEX_MCP_PROTOCOL_VERSION = "2026-07-28" }}
"""


async def test_codex_speaks_2026_07_28_to_our_stdio_server_when_opted_in(tmp_path: Path) -> None:
    """The README's stdio opt-in: with the feature and the entry's marker, Codex sends
    server/discover (no initialize) and calls statelessly; the same entry without the
    feature initializes a session as before."""
    era_echo = str(ROOT / "tests/interop/servers/era_echo.py")
    entry = _stdio_server_2026([str(ROOT / "cmd/mcp"), "--serve", era_echo])
    stateless, output = await run_codex(tmp_path / "opted-in", entry + STDIO_2026_OPT_IN)
    assert_echo_called(stateless, "codexmcp", output)
    assert "[stateless 2026-07-28]" in str(stateless.tool_outputs()[0]), output
    session, output = await run_codex(tmp_path / "not-opted-in", entry)
    assert_echo_called(session, "codexmcp", output)
    assert "[session " in str(session.tool_outputs()[0]), output


async def test_codex_speaks_2026_07_28_to_the_gateway_over_stdio(tmp_path: Path) -> None:
    """The gateway in front of a server, opted in the same way: Codex's discover result
    from the gateway is one it accepts (it parses 2026 results strictly: one bad field fails
    the whole server), and the call reaches the child."""
    era_echo = str(ROOT / "tests/interop/servers/era_echo.py")
    entry = _stdio_server_2026(
        [str(ROOT / "cmd/mcp"), "--", sys.executable, str(ROOT / "cmd/mcp"), "--serve", era_echo]
    )
    provider, output = await run_codex(tmp_path, entry + STDIO_2026_OPT_IN)
    assert_echo_called(provider, "codexmcp", output)
