"""The real Codex CLI 0.171 with the gateway as its one MCP server, offline against a fake
model, over stdio (Codex launches `codex-mcp`) and over HTTP (`codex-mcp-http`): Codex is
offered the children's tools, the ones it would have dropped repaired, and a call reaches a
child and its answer comes back to the model."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from .codex_harness import CODEX, ToolCall, run_codex, stdio_server_toml
from .gateway_helpers import BROKEN, CMD_MCP, TIME, launch_http_gateway, stdio, stop, write_config

pytestmark = [
    pytest.mark.interop,
    pytest.mark.skipif(
        not CODEX.exists(), reason="the Codex CLI is not installed (scripts/setup.sh)"
    ),
]


# Codex passes a server only the variables it lists: keep the gateway's cache out of $HOME.
def _cache_env() -> str:
    return f'XDG_CACHE_HOME = "{os.environ["XDG_CACHE_HOME"]}"'


# Tools Codex drops or loses its whole server over when served directly (see test_codex_interop).
TOOLS = "echo,null_root,bad_properties,snake_case,dash-name,structured"


def _config(tmp_path: Path) -> Path:
    servers = {"brk": stdio(BROKEN, "--tools", TOOLS)}
    if TIME.exists():
        servers["time"] = stdio(TIME)
    return write_config(tmp_path, servers)


def _assert_offered(offered: dict[str, dict[str, object]]) -> None:
    tools = offered["mcp__codex_mcp"]
    # Served directly, null_root and bad_properties are skipped and snake_case (no
    # inputSchema) costs Codex the whole server; through the gateway each is offered.
    assert {
        "brk__echo",
        "brk__null_root",
        "brk__bad_properties",
        "brk__snake_case",
        "brk__dash_name",
        "brk__structured",
        "gateway_status",
    } <= set(tools)
    if TIME.exists():
        assert {"time__get_current_time", "time__convert_time"} <= set(tools)


async def test_codex_launches_the_gateway_and_calls_a_child(tmp_path: Path) -> None:
    config = _config(tmp_path)
    toml = stdio_server_toml("codex-mcp", sys.executable, [CMD_MCP])
    toml += f'required = true\nenv = {{ CODEX_MCP_WRAPPER_CONFIG = "{config}", {_cache_env()} }}\n'
    call = ToolCall("mcp__codex_mcp", "brk__echo", {"message": "through the gateway"})
    # Codex's defaults for exec (read-only sandbox, no approval): echo is read-only, so it runs.
    run = await run_codex(tmp_path / "home", toml, call=call, full_access=False)
    assert run.returncode == 0, run.output
    _assert_offered(run.model.offered_tools())
    [output] = run.model.tool_outputs()
    assert output[-1] == {"type": "input_text", "text": "through the gateway"}, run.output


async def test_codex_calls_a_child_through_the_gateway_over_http(tmp_path: Path) -> None:
    process, url = launch_http_gateway(_config(tmp_path))
    try:
        toml = f'[mcp_servers.codex-mcp]\nurl = "{url}"\nrequired = true\n'
        call = ToolCall("mcp__codex_mcp", "brk__structured", {})
        run = await run_codex(tmp_path / "home", toml, call=call)
    finally:
        stop(process)
    assert run.returncode == 0, run.output
    _assert_offered(run.model.offered_tools())
    # Codex gives the model the structured content of a result that has it.
    assert '{"value":42}' in str(run.model.tool_outputs()), run.model.tool_outputs()


async def test_codex_sees_the_status_tool_answer(tmp_path: Path) -> None:
    config = write_config(tmp_path, {"brk": stdio(BROKEN, "--tools", "echo")})
    toml = stdio_server_toml("codex-mcp", sys.executable, [CMD_MCP])
    toml += f'required = true\nenv = {{ CODEX_MCP_WRAPPER_CONFIG = "{config}", {_cache_env()} }}\n'
    call = ToolCall("mcp__codex_mcp", "gateway_status", {})
    run = await run_codex(tmp_path / "home", toml, call=call, full_access=False)
    assert run.returncode == 0, run.output
    outputs = str(run.model.tool_outputs())
    assert '"name":"brk"' in outputs and '"state":"ready"' in outputs, outputs


async def test_codex_sees_and_calls_a_child_that_takes_8_s_to_start(tmp_path: Path) -> None:
    """Codex lists tools once. First start: nothing cached, the gateway waits for the slow
    child within its startup budget; next start, with no budget at all: its tools come from
    the listing kept on disk while it starts, and the call waits for it."""
    config = write_config(tmp_path, {"slow": stdio(BROKEN, "--tools", "echo", "--slow-init", "8")})
    cache = tmp_path / "cache"
    for start, budget in (("first", ""), ("second", "0")):
        toml = stdio_server_toml("codex-mcp", sys.executable, [CMD_MCP])
        toml += (
            "required = true\nstartup_timeout_sec = 30\n"
            f'env = {{ CODEX_MCP_WRAPPER_CONFIG = "{config}", XDG_CACHE_HOME = "{cache}", '
            f'WRAPPER_STARTUP_BUDGET_MS = "{budget}" }}\n'
        )
        call = ToolCall("mcp__codex_mcp", "slow__echo", {"message": f"{start} start"})
        run = await run_codex(tmp_path / start, toml, call=call, full_access=False)
        assert run.returncode == 0, run.output
        assert "slow__echo" in run.model.offered_tools()["mcp__codex_mcp"], start
        [output] = run.model.tool_outputs()
        assert output[-1] == {"type": "input_text", "text": f"{start} start"}, run.output
        assert list(cache.glob("codex-mcp/listings/*.json")), "the listing is kept"
