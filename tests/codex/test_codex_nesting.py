"""`--serve codex` inside the Codex a bridge of ours started: the Codex it starts reads the same
config.toml, so an entry serving `codex-mcp --serve codex` would start it again inside, as
deep as the model asks. Each bridge gives its Codex `CODEX_MCP_BRIDGE_DEPTH` (its own depth
plus one); a bridge finds its depth in its own environment or, since Codex gives an MCP
server a cleared environment, in its ancestors'. Past one level of nesting it refuses: one
line on stderr, an error result for each call, no Codex started (specs/codex-tools.md,
"Nesting")."""

from __future__ import annotations

import io
import os
import re
import sys
from pathlib import Path
from typing import Any

import pytest
from codex_mcp.client import Client
from interop import fake_responses_provider as fake
from interop.fake_responses_provider import FakeProvider

from .conftest import ROOT, codex_env, needs_codex, write_codex_home

STDIO = [sys.executable, str(ROOT / "cmd/mcp"), "--serve", "codex"]
DEPTH_ENV = "CODEX_MCP_BRIDGE_DEPTH"
REFUSED = "refused: this codex-mcp --serve codex runs inside"
#: As Codex starts a stdio MCP server: a child of its own process, given a cleared
#: environment (HOME, PATH...; specs/doctor.md), so the marker is in the parent's only.
AS_CODEX_STARTS_IT = 'env -i PATH="$PATH" HOME="$HOME" CODEX_BIN=/nonexistent/codex "$@"; exit $?'


def _environment(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("CODEX_MCP_")}
    return {**env, "CODEX_BIN": "/nonexistent/codex", **extra}


async def _call(command: list[str], env: dict[str, str]) -> tuple[Any, str]:
    errlog = io.StringIO()
    async with Client.stdio(command, env=env, errlog=errlog) as client:  # type: ignore[arg-type]
        result = await client.call_tool("codex", {"prompt": "deeper"}, retries=0, timeout=30)
    return result, errlog.getvalue()


#: Started by Codex as an MCP server, or by a command Codex ran (whose environment it has).
STARTED_BY = {"parent": ["/bin/sh", "-c", AS_CODEX_STARTS_IT, "sh", *STDIO], "own": STDIO}


@pytest.mark.parametrize("where", STARTED_BY)
async def test_a_bridge_two_deep_refuses_with_one_line_and_an_error_result(where: str) -> None:
    command = STARTED_BY[where]
    result, stderr = await _call(command, _environment(**{DEPTH_ENV: "2"}))
    assert result.is_error
    assert REFUSED in result.text, result.text
    assert DEPTH_ENV in result.text
    said = [line for line in stderr.splitlines() if REFUSED in line]
    assert len(said) == 1, stderr
    assert "/nonexistent/codex" not in stderr + result.text, "no Codex was looked for"


async def test_one_level_of_nesting_is_served() -> None:
    command = ["/bin/sh", "-c", AS_CODEX_STARTS_IT, "sh", *STDIO]
    result, stderr = await _call(command, _environment(**{DEPTH_ENV: "1"}))
    assert result.is_error  # no Codex at CODEX_BIN: the ordinary error, not a refusal
    assert "/nonexistent/codex" in result.text, result.text
    assert REFUSED not in result.text + stderr


def deeper(body: dict[str, Any], number: int) -> list[fake.Item]:
    """Every Codex's model: call the bridge's `codex` tool, then say what it answered."""
    outputs = fake.function_outputs(body)
    if outputs:
        return [fake.message(f"answered: {outputs['call_deeper']}", number)]
    arguments = {"prompt": "deeper", "approval-policy": "never", "sandbox": "danger-full-access"}
    item = fake.function_call("codex", arguments, "call_deeper", number)
    item["namespace"] = "mcp__bridge"
    return [item]


@pytest.mark.interop
@pytest.mark.slow
@needs_codex
async def test_codex_serving_itself_through_its_config_stops_one_level_down(
    fake_model: tuple[FakeProvider, int], tmp_path: Path
) -> None:
    provider, port = fake_model
    provider.responder = deeper
    home = tmp_path / "home"
    write_codex_home(home, port)
    env = codex_env(home)
    entry = ", ".join(f'{key} = "{value}"' for key, value in env.items())
    with (home / "config.toml").open("a") as config:
        config.write(
            f'\n[mcp_servers.bridge]\ncommand = "{sys.executable}"\n'
            f'args = ["{ROOT / "cmd/mcp"}", "--serve", "codex"]\nenv = {{ {entry} }}\n'
            "required = true\ntool_timeout_sec = 300\n"
        )
    arguments = {"prompt": "deeper", "approval-policy": "never", "sandbox": "danger-full-access"}
    async with Client.stdio(STDIO, env={**os.environ, **env}, cwd=str(tmp_path)) as client:
        result = await client.call_tool("codex", arguments, retries=0, timeout=240)
    assert not result.is_error, result.text
    outputs = [str(output) for output in provider.tool_outputs()]
    # The outer bridge's Codex called the bridge in its config (served, one level down);
    # that one's Codex called it again, two down: refused, and the turns came back up.
    assert len(outputs) == 2, outputs
    refused = [output for output in outputs if REFUSED in output and "answered:" not in output]
    relayed = [output for output in outputs if "answered:" in output and REFUSED in output]
    assert len(refused) == 1 and len(relayed) == 1, outputs  # told two down, said one down
    log = (home / "log/codex-rmcp.log").read_text()
    assert len(re.findall(r"Codex app-server started", log)) == 2, log
