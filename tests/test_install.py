"""Installed like a user: the wheel built from this tree installs into a clean virtualenv
and serves a call from there, with the core mapped from internal/mcp (no symlink needed)."""

from __future__ import annotations

import json
import shutil
import site
import subprocess
import sys
import venv
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _checkout_as_on_windows(where: Path) -> Path:
    """The files a build reads, with the core's symlink as Git writes it without symlink
    support: a small text file holding the link's target."""
    where.mkdir()
    for name in ("pyproject.toml", "setup.py", "README.md"):
        shutil.copy(ROOT / name, where / name)
    skip = shutil.ignore_patterns("__pycache__", "core")
    shutil.copytree(ROOT / "pkg", where / "pkg", ignore=skip)
    shutil.copytree(ROOT / "internal", where / "internal", ignore=skip)
    (where / "pkg/codex_mcp/core").write_text("../../internal/mcp")
    return where


def _build_wheel(source: Path, out: Path) -> Path:
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "-w", str(out), str(source)],
        check=True,
        capture_output=True,
        timeout=300,
    )
    (wheel,) = out.glob("codex_mcp-*.whl")
    return wheel


@pytest.mark.slow
def test_the_wheel_installs_in_a_clean_venv_and_serves_a_call(tmp_path: Path) -> None:
    source = _checkout_as_on_windows(tmp_path / "src")
    wheel = _build_wheel(source, tmp_path / "dist")
    names = zipfile.ZipFile(wheel).namelist()
    assert "codex_mcp/core/peer.py" in names and "codex_mcp/core/methods/tools.py" in names
    assert "codex_mcp/py.typed" in names
    assert not any(name.startswith(("mcp/", "internal/")) for name in names)

    target = tmp_path / "venv"
    venv.create(target, with_pip=False)
    python = target / "bin/python"
    purelib = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()
    # The dependencies come from the test's own environment (no network); codex-mcp itself
    # only from the wheel, which pip installs with its console scripts.
    pip = [sys.executable, "-m", "pip", "--python", str(python), "install", "--quiet"]
    subprocess.run(
        [*pip, "--no-deps", "--no-index", str(wheel)], check=True, capture_output=True, timeout=120
    )
    Path(purelib, "deps-from-the-test-env.pth").write_text("\n".join(site.getsitepackages()) + "\n")

    where = subprocess.run(
        [str(python), "-c", "import codex_mcp.core.peer as p; print(p.__file__)"],
        check=True,
        capture_output=True,
        text=True,
        cwd=tmp_path,
    ).stdout.strip()
    assert where.startswith(purelib), where

    requests = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "echo", "arguments": {"message": "installed"}}},
    ]  # fmt: skip
    served = subprocess.run(
        [str(target / "bin/codex-mcp")],
        input="".join(json.dumps(r) + "\n" for r in requests),
        capture_output=True,
        text=True,
        timeout=60,
        cwd=tmp_path,
        env={"PATH": "/usr/bin:/bin", "HOME": str(tmp_path)},
    )
    answers = {m["id"]: m for m in map(json.loads, served.stdout.splitlines()) if "id" in m}
    assert answers[2]["result"]["content"][0]["text"] == "installed", served.stderr
    version = subprocess.run(
        [str(target / "bin/codex-mcp"), "--version"], capture_output=True, text=True, timeout=30
    )
    assert version.stdout.strip() == "codex-mcp 0.1.0", version.stderr
