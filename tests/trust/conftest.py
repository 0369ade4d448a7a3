"""The trust tests' Codex home lives in the test's own folder, never the user's (the state
directory, the lock's default home, is every test's own: tests/conftest.py)."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture(autouse=True)
def _no_config_from_outside(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("CODEX_MCP_WRAPPER_CONFIG", raising=False)
    monkeypatch.delenv("MCP_WRAPPER_SERVER_NAME", raising=False)


@pytest.fixture
def codex_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "codex-home"
    (home / "skills").mkdir(parents=True)
    monkeypatch.setenv("CODEX_HOME", str(home))
    return home
