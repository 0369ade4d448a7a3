"""The real Codex CLI's app-server, offline: a CODEX_HOME whose config points Codex at the
fake Responses model on 127.0.0.1 (no key, no network)."""

from __future__ import annotations

import os
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from aiohttp import web
from codex_mcp.codex.driver import CodexDriver
from interop.fake_responses_provider import FakeProvider, codex_config

ROOT = Path(__file__).resolve().parents[2]
#: The Codex under test: CODEX_BIN when set (to try another version), else the repo's npm one.
CODEX = Path(os.environ.get("CODEX_BIN") or ROOT / ".tools/npm/node_modules/.bin/codex")
needs_codex = pytest.mark.skipif(
    not CODEX.exists(), reason=f"no Codex CLI at {CODEX}: run scripts/setup.sh (or set CODEX_BIN)"
)


def write_codex_home(home: Path, port: int) -> None:
    home.mkdir(exist_ok=True)
    (home / "config.toml").write_text(codex_config(port, retries=False))


def codex_env(home: Path) -> dict[str, str]:
    return {"CODEX_HOME": str(home), "FAKE_PROVIDER_KEY": "not-a-real-key", "CODEX_BIN": str(CODEX)}


@pytest.fixture
async def fake_model() -> AsyncIterator[tuple[FakeProvider, int]]:
    provider = FakeProvider()
    runner = web.AppRunner(provider.app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
    yield provider, port
    provider.release()
    await runner.cleanup()


@pytest.fixture
def codex_home(tmp_path: Path, fake_model: tuple[FakeProvider, int]) -> Path:
    home = tmp_path / "codex-home"
    write_codex_home(home, fake_model[1])
    return home


@pytest.fixture
def workdir(tmp_path: Path) -> Path:
    work = tmp_path / "work"
    work.mkdir()
    return work


@pytest.fixture
async def driver(codex_home: Path, workdir: Path) -> AsyncIterator[CodexDriver]:
    driver = await CodexDriver.spawn(env=codex_env(codex_home), cwd=str(workdir))
    yield driver
    await driver.close()
