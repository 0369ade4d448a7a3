"""Finding the Codex CLI: CODEX_BIN, else PATH; a missing or too old one is one clear error."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest
from codex_mcp.codex.binary import MIN_VERSION, find_codex, format_version, parse_version
from codex_mcp.codex.driver import CodexDriver
from codex_mcp.codex.errors import CodexUnavailable

from .conftest import CODEX, needs_codex

MINIMUM = format_version(MIN_VERSION)


def fake_codex(directory: Path, version_output: str, exit_code: int = 0) -> Path:
    """An executable `codex` that only answers --version."""
    directory.mkdir(parents=True, exist_ok=True)
    script = directory / "codex"
    script.write_text(f"#!/bin/sh\necho '{version_output}'\nexit {exit_code}\n")
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    return script


@pytest.mark.parametrize(
    ("text", "version"),
    [
        ("codex-cli 0.169.0", (0, 169, 0)),
        ("codex-cli 0.170.0-alpha.2\n", (0, 170, 0)),
        ("codex 1.2.3", (1, 2, 3)),
        ("no version here", None),
    ],
)
def test_parse_version(text: str, version: tuple[int, int, int] | None) -> None:
    assert parse_version(text) == version


async def test_codex_bin_pointing_nowhere_names_the_variable_and_path(tmp_path: Path) -> None:
    missing = tmp_path / "no-such-codex"
    with pytest.raises(CodexUnavailable) as caught:
        await find_codex({"CODEX_BIN": str(missing), "PATH": ""})
    assert f"CODEX_BIN={missing} does not exist" in caught.value.message


async def test_no_codex_on_path_names_path_and_the_variable(tmp_path: Path) -> None:
    with pytest.raises(CodexUnavailable) as caught:
        await find_codex({"PATH": str(tmp_path)})
    message = caught.value.message
    assert "CODEX_BIN is not set" in message
    assert f"no `codex` on PATH (PATH={tmp_path})" in message
    assert f"{MINIMUM} or newer" in message


async def test_a_non_executable_codex_bin_is_refused(tmp_path: Path) -> None:
    script = fake_codex(tmp_path, "codex-cli 0.169.0")
    script.chmod(0o644)
    with pytest.raises(CodexUnavailable, match="is not executable"):
        await find_codex({"CODEX_BIN": str(script)})


async def test_a_too_old_codex_names_both_versions(tmp_path: Path) -> None:
    script = fake_codex(tmp_path / "bin", "codex-cli 0.98.2")
    with pytest.raises(CodexUnavailable) as caught:
        await find_codex({"PATH": str(script.parent)})
    message = caught.value.message
    assert f"Codex CLI at {script} (from PATH) is version 0.98.2" in message
    assert f"needs {MINIMUM} or newer" in message
    assert "CODEX_BIN" in message


async def test_an_unreadable_version_is_an_error(tmp_path: Path) -> None:
    script = fake_codex(tmp_path, "something broke", exit_code=3)
    with pytest.raises(CodexUnavailable, match="exited with code 3 and printed 'something broke'"):
        await find_codex({"CODEX_BIN": str(script)})


async def test_codex_bin_wins_over_path(tmp_path: Path) -> None:
    chosen = fake_codex(tmp_path / "chosen", "codex-cli 0.200.0")
    fake_codex(tmp_path / "on-path", "codex-cli 0.100.0")
    found = await find_codex({"CODEX_BIN": str(chosen), "PATH": str(tmp_path / "on-path")})
    assert (found.path, found.version, found.source) == (str(chosen), (0, 200, 0), "CODEX_BIN")


async def test_spawning_without_a_codex_fails_before_starting_anything(tmp_path: Path) -> None:
    with pytest.raises(CodexUnavailable, match="CODEX_BIN"):
        await CodexDriver.spawn(env={"CODEX_BIN": str(tmp_path / "missing")})


@needs_codex
@pytest.mark.interop
async def test_the_installed_codex_is_new_enough() -> None:
    found = await find_codex({"CODEX_BIN": str(CODEX)})
    assert found.version >= MIN_VERSION
