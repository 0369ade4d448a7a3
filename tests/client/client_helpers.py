"""Helpers for the client tests: where the real peers are, and how to start them on
127.0.0.1 and a free port."""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from support.polling import until_sync
from support.processes import free_port as free_port
from support.processes import wait_for_port

ROOT = Path(__file__).resolve().parents[2]
SERVERS = Path(__file__).resolve().parent / "servers"
SDK_SERVER = str(SERVERS / "sdk_server.py")
OUR_SERVER = [sys.executable, str(ROOT / "cmd" / "mcp")]
NODE_BIN = ROOT / ".tools" / "npm" / "node_modules" / ".bin"
EVERYTHING = NODE_BIN / "mcp-server-everything"
EVERYTHING_JS = (
    ROOT / ".tools/npm/node_modules/@modelcontextprotocol/server-everything/dist/index.js"
)
BIND_LOCALHOST = str(SERVERS / "bind_localhost.cjs")

#: Peers these tests talk to that may be missing on a fresh machine: each test that
#: needs one skips, saying how to install it.
HAS_NODE = shutil.which("node") is not None
HAS_SDK = importlib.util.find_spec("mcp") is not None


def _everything_missing() -> str | None:
    if not HAS_NODE:
        return "node is not on PATH (server-everything runs on it)"
    if not EVERYTHING.exists():
        return "npm tools missing: run .ci/node-tools.sh"
    return None


EVERYTHING_MISSING = _everything_missing()
needs_everything = pytest.mark.skipif(
    EVERYTHING_MISSING is not None, reason=EVERYTHING_MISSING or ""
)


def sdk_command(*args: str) -> list[str]:
    """The official-SDK test server's command line; skips the test when `mcp` is missing."""
    if not HAS_SDK:
        pytest.skip("the official MCP SDK is not installed: pip install mcp")
    return [sys.executable, SDK_SERVER, *args]


def start_server(
    args: list[str], port: int, env: dict[str, str] | None = None
) -> subprocess.Popen[bytes]:
    proc = subprocess.Popen(
        args,
        env={**os.environ, **(env or {})},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        wait_for_port(port, proc, "the test server")
    except BaseException:
        stop_server(proc)
        raise
    return proc


def stop_server(proc: subprocess.Popen[bytes]) -> None:
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(5)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def everything_args(mode: str) -> list[str]:
    return ["node", "-r", BIND_LOCALHOST, str(EVERYTHING_JS), mode]


def wait_for_line(path: Path, line: str, timeout: float = 5.0) -> bool:
    try:
        until_sync(lambda: line in path.read_text().splitlines(), timeout)
    except AssertionError:
        return False
    return True
