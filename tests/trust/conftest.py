"""The trust tests' state (the lock's default home) and Codex home live in the test's own
folder: never the user's."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture(autouse=True)
def _own_state_directory(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path_factory.mktemp("xdg-state")))
    monkeypatch.delenv("CODEX_MCP_WRAPPER_CONFIG", raising=False)
    monkeypatch.delenv("MCP_WRAPPER_SERVER_NAME", raising=False)


@pytest.fixture
def codex_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "codex-home"
    (home / "skills").mkdir(parents=True)
    monkeypatch.setenv("CODEX_HOME", str(home))
    return home
