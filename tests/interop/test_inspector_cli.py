"""The MCP Inspector CLI (npm @modelcontextprotocol/inspector) against our servers."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from conftest import LaunchHttp

ROOT = Path(__file__).resolve().parents[2]
INSPECTOR = ROOT / ".tools/npm/node_modules/.bin/mcp-inspector"

pytestmark = [
    pytest.mark.interop,
    pytest.mark.skipif(
        not INSPECTOR.exists(), reason="run .ci/node-tools.sh to install the Inspector"
    ),
    pytest.mark.skipif(shutil.which("node") is None, reason="node is not on PATH"),
]


def inspect(*args: str) -> object:
    result = subprocess.run(
        [str(INSPECTOR), "--cli", *args], capture_output=True, text=True, timeout=90
    )
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


@pytest.fixture(scope="module")
def http_url(launch_http: LaunchHttp) -> str:
    return launch_http()


def test_inspector_lists_and_calls_over_stdio() -> None:
    server = [sys.executable, str(ROOT / "cmd/mcp")]
    listed = inspect(*server, "--method", "tools/list")
    assert "echo" in [tool["name"] for tool in listed["tools"]]  # type: ignore[index]
    called = inspect(
        *server, "--method", "tools/call", "--tool-name", "echo", "--tool-arg", "message=hello"
    )
    assert called == {"content": [{"type": "text", "text": "hello"}]}


def test_inspector_calls_over_streamable_http(http_url: str) -> None:
    called = inspect(
        http_url,
        "--transport",
        "http",
        "--method",
        "tools/call",
        "--tool-name",
        "echo",
        "--tool-arg",
        "message=over http",
    )
    assert called == {"content": [{"type": "text", "text": "over http"}]}
