"""A policy that hides a skill hides its files whatever its child is doing (issue 38): up,
`lazy` and not started yet (served from its kept listing), stopped for idleness, or down.
The policy learns which skill a file belongs to from the child's skills; a read that would
start the child is decided once they are known, or refused. Real processes: a stdio
gateway (`codex-mcp --policy`) over our skills server, our client."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from codex_mcp.client import Client, McpError

from .gateway_helpers import PY, gateway, status, stdio, until, write_config

pytestmark = pytest.mark.slow

SKILLS_SERVER = str(Path(__file__).resolve().parents[1] / "server" / "servers" / "skills_server.py")
#: The hidden skill's file (its SKILL.md is what the rule names) and an open skill's file.
HIDDEN_FILE = "skill://docs/team/code-review/templates/comment.md"
OPEN_FILE = "skill://docs/pdf/templates/invoice.md"
POLICY = {
    "default": "allow",
    "rules": [
        {"effect": "deny", "kind": "resource", "tool": ["skill://team/code-review/SKILL.md"]}
    ],
}


def _setup(tmp_path: Path, **entry: Any) -> tuple[Path, Path, dict[str, str]]:
    folder = tmp_path / "skills" / "pdf" / "templates"
    folder.mkdir(parents=True, exist_ok=True)
    (folder.parent / "SKILL.md").write_text("---\nname: pdf\ndescription: PDFs\n---\n# PDF\n")
    (folder / "invoice.md").write_text("# Invoice\n")
    config = write_config(
        tmp_path, {"docs": stdio([PY, SKILLS_SERVER, str(tmp_path / "skills")], **entry)}
    )
    policy = tmp_path / "policy.json"
    policy.write_text(json.dumps(POLICY))
    return config, policy, {"XDG_CACHE_HOME": str(tmp_path / "cache")}


async def _read(client: Client, uri: str) -> str:
    result = await client.request("resources/read", {"uri": uri})
    return str(result["contents"][0].get("text"))


async def _assert_hidden_and_open(client: Client) -> None:
    with pytest.raises(McpError) as refused:
        await _read(client, HIDDEN_FILE)
    assert "Finding" not in str(refused.value), refused.value
    assert await _read(client, OPEN_FILE) == "# Invoice\n"


async def _state(client: Client) -> str:
    return str((await status(client))["docs"]["state"])


async def _in_state(client: Client, state: str) -> bool:
    return await _state(client) == state


async def test_a_hidden_skills_file_stays_hidden_after_an_idle_stop(tmp_path: Path) -> None:
    config, policy, env = _setup(tmp_path, idle_timeout_sec=0.5)
    async with gateway(config, "--policy", str(policy), env=env) as client:
        await until(lambda: _in_state(client, "ready"), 30)
        await _assert_hidden_and_open(client)  # up: the skill is known
        await until(lambda: _in_state(client, "idle"), 30)
        with pytest.raises(McpError):  # stopped: still hidden, as before the stop
            await _read(client, HIDDEN_FILE)


async def test_a_hidden_skills_file_is_hidden_before_a_lazy_child_starts(tmp_path: Path) -> None:
    config, policy, env = _setup(tmp_path)
    async with gateway(config, "--policy", str(policy), env=env) as client:
        await client.list_tools()  # the listing is kept: a lazy child is served from it
    config, _, _ = _setup(tmp_path, lazy=True)
    async with gateway(config, "--policy", str(policy), env=env) as client:
        assert await _state(client) == "idle"
        with pytest.raises(McpError):  # the read that starts it is decided once it is up
            await _read(client, HIDDEN_FILE)
        assert await _read(client, OPEN_FILE) == "# Invoice\n"
