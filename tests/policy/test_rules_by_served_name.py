"""A policy rule names a tool as the user sees it, and a rule that names nothing is said
(issue 39's trap; specs/policy.md, "Rules"): behind a gateway a rule by the served name
(`kid__open_tool`) or by the served name without the server's prefix (the repaired
`toggle_simulated_logging` of the child's `toggle-simulated-logging`) hides the tool; a rule
that names nothing the server serves stops the start with one line naming the near misses
(the real `codex-mcp` and `codex-mcp-http`); behind a gateway, whose children list in the
background, such a rule is said once, as a warning, when their listings are known."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import aiohttp
import pytest
from support.processes import HttpProcess

from .policy_helpers import CMD_MCP, ROOT, Caller, gateway_server, write_policy

HIDEABLE = Path(__file__).parent / "servers" / "hideable.py"
CMD_HTTP = str(ROOT / "cmd/http")


@pytest.fixture
async def http() -> AsyncIterator[aiohttp.ClientSession]:
    async with aiohttp.ClientSession() as session:
        yield session


async def test_a_rule_by_the_served_name_hides_the_tool(
    tmp_path: Path, http: aiohttp.ClientSession
) -> None:
    rules = [
        {"effect": "deny", "tool": "kid__open_tool"},  # served, qualified
        {"effect": "deny", "tool": "toggle_simulated_logging"},  # served, repaired, bare
    ]
    policy = write_policy(tmp_path, {"default": "allow", "rules": rules})
    server = gateway_server(tmp_path, policy, {"kid": {}}, child=HIDEABLE)
    try:
        caller = await Caller(http, server.url).open()
        listed = await caller.listed("tools")
        assert "kid__secret_tool" in listed, listed  # the child is listed
        assert "kid__open_tool" not in listed and "kid__toggle_simulated_logging" not in listed
        for name in ("kid__open_tool", "kid__toggle_simulated_logging"):
            reply = await caller.ask("tools/call", {"name": name, "arguments": {}})
            assert reply["error"]["message"] == f"Unknown tool: {name}", reply
        server.wait_for_line(r"policy deny: action=call tool=kid__toggle_simulated_logging child=kid own=toggle-simulated-logging ")  # fmt: skip
        assert "names nothing" not in server.stderr  # both rules name a tool
    finally:
        server.stop()


TYPO = {"default": "allow", "rules": [{"effect": "deny", "tool": "secret_tol"}]}


@pytest.mark.parametrize("command", [CMD_MCP, CMD_HTTP])
def test_a_rule_that_names_nothing_stops_the_start_with_one_line(
    tmp_path: Path, command: str
) -> None:
    policy = write_policy(tmp_path, TYPO)
    args = ["--port", "0"] if command == CMD_HTTP else []
    done = subprocess.run(
        [sys.executable, command, "--serve", str(HIDEABLE), "--policy", str(policy), *args],
        input="",
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 1, done
    assert done.stdout == ""
    (line,) = done.stderr.splitlines()
    prog = "codex-mcp" if command == CMD_MCP else "codex-mcp-http"
    assert line.startswith(f"{prog}: --policy {policy}: rules[0]: names nothing"), line
    assert "tool 'secret_tol'" in line and "near misses: secret_tool" in line, line


def test_a_rule_on_a_server_not_in_the_configuration_stops_the_gateway(tmp_path: Path) -> None:
    policy = write_policy(
        tmp_path, {"default": "allow", "rules": [{"effect": "deny", "child": "kdi"}]}
    )
    kid = {"command": sys.executable, "args": [CMD_MCP, "--serve", str(HIDEABLE)]}
    config = tmp_path / ".mcp.json"
    config.write_text(json.dumps({"mcpServers": {"kid": kid}}))
    env = {k: v for k, v in os.environ.items() if not k.startswith(("WRAPPER_", "CODEX_MCP_"))}
    done = subprocess.run(
        [sys.executable, CMD_MCP, "--policy", str(policy)],
        input="",
        capture_output=True,
        text=True,
        timeout=60,
        env={**env, "CODEX_MCP_WRAPPER_CONFIG": str(config)},
    )
    assert done.returncode == 1 and done.stdout == "", done
    said = [line for line in done.stderr.splitlines() if "--policy" in line]
    assert said == [
        f"codex-mcp: --policy {policy}: rules[0]: child 'kdi' names no server of the "
        "configuration; near misses: kid"
    ], done.stderr


async def test_behind_a_gateway_a_rule_naming_nothing_is_said_once_when_listed(
    tmp_path: Path, http: aiohttp.ClientSession
) -> None:
    rules = [{"effect": "deny", "tool": "kid__secret_tol"}, {"effect": "deny", "tool": "open_tool"}]
    policy = write_policy(tmp_path, {"default": "allow", "rules": rules})
    server: HttpProcess = gateway_server(tmp_path, policy, {"kid": {}}, child=HIDEABLE)
    try:
        caller = await Caller(http, server.url).open()
        for kind in ("tools", "resources", "prompts", "tools"):
            await caller.listed(kind)
        line = server.wait_for_line(r"rules\[0\]: names nothing", timeout=10)
        assert "near misses: kid__secret_tool" in line and "WARNING" in line, line
        await caller.listed("tools")
        said = [each for each in server.lines if "names nothing" in each]
        assert len(said) == 1, said  # once, and not of rules[1], which names a tool
    finally:
        server.stop()
