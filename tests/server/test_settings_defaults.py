"""The stdio entrypoint skips pydantic-settings when nothing is configured, using the plain
defaults in defaults.py instead: those must be the settings model's defaults, and every
setting must be one the environment check knows."""

from __future__ import annotations

import dataclasses
import os
from pathlib import Path

import pytest
from codex_mcp.defaults import DEFAULTS, CommonDefaults, configured_by_environment, quick_flags
from codex_mcp.settings import Settings, load_settings


def _unconfigure(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.chdir(tmp_path)  # no .env here
    for key in list(os.environ):
        if key.upper().startswith("CODEX_MCP_"):
            monkeypatch.delenv(key)


def test_plain_defaults_are_the_models_defaults(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    _unconfigure(monkeypatch, tmp_path)
    model = Settings()
    assert set(Settings.model_fields) == {f.name for f in dataclasses.fields(CommonDefaults)}
    for field in dataclasses.fields(CommonDefaults):
        assert getattr(model, field.name) == getattr(DEFAULTS, field.name), field.name


def test_only_real_settings_count_as_configuration(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    _unconfigure(monkeypatch, tmp_path)
    assert not configured_by_environment()
    monkeypatch.setenv("CODEX_MCP_BENCH_TOOLS", "5")  # read by the builtin server, not a setting
    assert not configured_by_environment()
    monkeypatch.setenv("codex_mcp_log_level", "debug")  # pydantic-settings ignores case
    assert configured_by_environment()
    assert Settings().log_level == "debug"
    monkeypatch.delenv("codex_mcp_log_level")
    (tmp_path / ".env").write_text("CODEX_MCP_SHUTDOWN_TIMEOUT=1\n")
    assert configured_by_environment()


@pytest.mark.parametrize(
    "argv",
    [
        ["--serve", "my_server.py"],
        ["--serve=pkg.module:server", "--log-level", "debug"],
        ["--log-level=warning"],
        ["--serve", "a.py", "--serve", "b.py"],  # the last one wins, as with argparse
    ],
)
def test_quick_flags_read_what_the_model_reads(
    argv: list[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    _unconfigure(monkeypatch, tmp_path)
    quick = quick_flags(argv)
    assert quick is not None
    model = load_settings(Settings, argv, "codex-mcp")
    for field in dataclasses.fields(CommonDefaults):
        assert getattr(quick, field.name) == getattr(model, field.name), field.name


@pytest.mark.parametrize(
    "argv",
    [
        ["--help"],
        ["--serve"],
        ["--serve", "--log-level", "debug"],
        ["--log-level", "loud"],
        ["--log-level", "DEBUG"],
        ["--max-message-bytes", "4096"],
        ["my_server.py"],
    ],
)
def test_quick_flags_leave_everything_else_to_the_model(argv: list[str]) -> None:
    assert quick_flags(argv) is None
