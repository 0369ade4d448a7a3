"""The lock a gateway Codex starts uses is the one `codex-mcp trust` and `codex-mcp lint`
read, whatever XDG_STATE_HOME the shell they run in has: Codex clears its servers'
environment (HOME and PATH stay, XDG_STATE_HOME goes), so its gateway keeps the lock under
`~/.local/state`, where a shell with XDG_STATE_HOME set would not look (specs/trust.md,
"The lock": Where). Real paths: HOME and XDG_STATE_HOME are the test's."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from codex_mcp.client import Client, StdioTransport
from codex_mcp.doctor.codex_launch import server_environment
from codex_mcp.gateway.config.load import read_config
from codex_mcp.trust.lock import LockFile, lock_path, tool_pin
from gateway.gateway_helpers import CMD_MCP, PY
from support.polling import until

from trust.test_rug_pull import ADD, POISON, POISONED
from trust.trust_helpers import scripted_config, write_script


def _shell(home: Path, state: Path, config: Path) -> dict[str, str]:
    """The user's shell: its HOME, its own XDG_STATE_HOME, the configuration."""
    return {
        **os.environ,
        "HOME": str(home),
        "XDG_STATE_HOME": str(state),
        "CODEX_MCP_WRAPPER_CONFIG": str(config),
    }


def _as_codex_starts_it(env: dict[str, str]) -> Client:
    """The gateway with this environment and nothing else."""
    return Client(StdioTransport([PY, CMD_MCP], env=env, inherit_env=False), timeout=30)


def _run(args: list[str], env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "codex_mcp.cli.stdio", *args],
        env=env, capture_output=True, text=True, timeout=60,
    )  # fmt: skip


@pytest.mark.slow
async def test_trust_and_lint_find_the_lock_of_the_gateway_codex_starts(tmp_path: Path) -> None:
    home, state = tmp_path / "home", tmp_path / "shell-state"
    home.mkdir()
    script = write_script(tmp_path / "calc.json", tools=[ADD])
    config = scripted_config(tmp_path, {"calc": script})
    shell = _shell(home, state, config)
    # The gateway as Codex starts it from that shell: its environment cleared, then the
    # entry's `env` (doctor/codex_launch.py holds Codex's rule).
    codex = server_environment(shell, shell["PATH"], (), {"CODEX_MCP_WRAPPER_CONFIG": str(config)})
    assert "XDG_STATE_HOME" not in codex
    codex_lock = lock_path(read_config(config), codex)
    assert codex_lock.is_relative_to(home / ".local/state")
    async with _as_codex_starts_it(codex) as client:
        await client.list_tools()  # pinned on first use
    write_script(script, tools=[POISONED])
    async with _as_codex_starts_it(codex) as client:
        # (until the child's own listing is in, the kept one, the trusted, is served)
        async def withheld() -> bool:
            return "calc__add" not in {tool.name for tool in await client.list_tools(cache=False)}

        await until(withheld, timeout=20, what="the changed tool withheld")
        await until(lambda: LockFile(codex_lock).read().pending, timeout=20, what="pending")
    assert not state.exists()  # nothing in the shell's state directory

    review = _run(["trust"], shell)
    assert review.returncode == 1, review.stdout + review.stderr
    assert "calc/add (tool): changed since trusted: description" in review.stdout
    shown = f"Trust lock: ~/.local/state/codex-mcp/trust/{codex_lock.name}"  # (HOME is ~)
    assert shown in review.stdout and "the one a gateway Codex starts uses" in review.stdout
    linted = _run(["lint", str(config)], shell)
    assert linted.returncode == 1 and "withheld [add]" in linted.stdout, linted.stdout
    accepted = _run(["trust", "--accept-all"], shell)
    assert accepted.returncode == 0 and "accepted: calc/add (tool)" in accepted.stdout
    pins = LockFile(codex_lock).read()
    assert pins.get(pins.trusted, "calc", "tools", "add") == tool_pin("add", POISONED)
    assert "withheld" not in _run(["lint", str(config)], shell).stdout
    assert not state.exists()
    assert POISON  # (the accepted description is the changed one)


def test_pending_in_both_places_is_shown_and_accepted_in_each(tmp_path: Path) -> None:
    """A gateway Codex started (`~/.local/state`) and one started in the shell
    (`$XDG_STATE_HOME`) each recorded a change: both are shown, each under its lock, and
    --accept-all accepts both."""
    home, state = tmp_path / "home", tmp_path / "shell-state"
    config = scripted_config(tmp_path, {"calc": write_script(tmp_path / "s.json")})
    shell = _shell(home, state, config)
    places = [lock_path(read_config(config), env) for env in ({"HOME": str(home)}, shell)]
    assert places[0] != places[1]
    for place, description in zip(places, ("from Codex", "from the shell"), strict=True):

        def edit(lock, description=description):  # type: ignore[no-untyped-def]
            lock.put(lock.trusted, "calc", "tools", "add", tool_pin("add", ADD))
            lock.put(
                lock.pending,
                "calc",
                "tools",
                "add",
                tool_pin("add", {**ADD, "description": description}),
            )
            return True

        LockFile(place).change(edit)
    review = _run(["trust"], shell)
    assert review.returncode == 1, review.stderr
    out = review.stdout
    assert f"~/.local/state/codex-mcp/trust/{places[0].name} (for" in out
    assert f"{state}/codex-mcp/trust/{places[1].name} (for" in out
    assert "+ from Codex" in out and "+ from the shell" in out
    assert _run(["trust", "--accept-all"], shell).returncode == 0
    assert not any(LockFile(place).read().pending for place in places)
