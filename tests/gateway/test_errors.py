"""Seed 001's error normalization, case by case, with real exceptions from the client library
(a real spawn of a missing command, a real child killed mid-call)."""

from __future__ import annotations

import errno
import sys
from pathlib import Path
from typing import Any

import pytest
from codex_mcp.client import Client
from codex_mcp.client.errors import ConnectionClosed, RequestTimeout, SpawnError
from codex_mcp.client.oauth import NeedsLogin
from codex_mcp.core.errors import McpError
from codex_mcp.gateway.errors import (
    crashed_error,
    exited_error,
    login_command,
    normalize_exception,
    normalize_rpc_error,
    passthrough_enabled,
    spawn_error,
    timeout_error,
)

BROKEN = Path(__file__).parent / "servers" / "broken_server.py"


def data(error: dict[str, Any]) -> tuple[Any, ...]:
    d = error["data"]
    return d["kind"], d["retryable"], d["serverName"], d["toolName"]


@pytest.mark.parametrize(
    ("code", "message", "kind", "retryable"),
    [
        (-32601, "Method not found: Method not found", "server_error", False),
        (-32602, "Invalid params: bad", "server_error", False),
        (-32603, "Internal error: bad", "server_error", True),
        (-32700, "Parse error: bad", "server_error", False),
        (-32600, "Invalid request: bad", "server_error", False),
    ],
)
def test_standard_codes(code: int, message: str, kind: str, retryable: bool) -> None:
    detail = "Method not found" if code == -32601 else "bad"
    error = normalize_rpc_error({"code": code, "message": detail}, server="time", tool="now")
    assert error["code"] == code
    expected = "Method not found" if code == -32601 else message
    assert error["message"] == f"{expected} (server 'time', tool 'now')"
    assert data(error) == (kind, retryable, "time", "now")
    assert error["data"]["original"] == {"code": code, "message": detail}


def test_the_implementation_range_infers_retryable_from_the_original() -> None:
    locked = normalize_rpc_error(
        {"code": -32000, "message": "database is locked"}, server="db", tool="q"
    )
    assert locked["message"] == "Server error: database is locked (server 'db', tool 'q')"
    assert data(locked) == ("tool_error", True, "db", "q")
    failed = normalize_rpc_error(
        {"code": -32000, "message": "tools/call failed", "data": {"error": "no such file"}},
        server="fs",
        tool="read",
    )
    assert data(failed) == ("tool_error", False, "fs", "read")
    assert failed["data"]["original"]["data"] == {"error": "no such file"}
    said = normalize_rpc_error(
        {"code": -32050, "message": "x", "data": {"retryable": True}}, server="s", tool=None
    )
    assert data(said) == ("server_error", True, "s", None)
    assert said["message"] == "Server error: x (server 's')"


def test_an_application_code_from_a_tool_is_a_tool_error() -> None:
    error = normalize_rpc_error(
        {"code": 42, "message": "quota\nexceeded\n  try tomorrow"}, server="s", tool="t"
    )
    assert error["message"] == "Tool error: quota exceeded try tomorrow (server 's', tool 't')"
    assert data(error) == ("tool_error", False, "s", "t")


def test_messages_are_one_line_and_bounded() -> None:
    error = normalize_rpc_error({"code": -32603, "message": "x" * 1000 + "\n" + "y"}, server="s")
    assert "\n" not in error["message"] and len(error["message"]) < 400


def test_a_malformed_error_is_an_internal_error() -> None:
    error = normalize_rpc_error({"message": "no code"}, server="s", tool="t")
    assert error["code"] == -32603 and data(error)[0] == "server_error"


def test_passthrough_returns_the_childs_error_as_is() -> None:
    original = {"code": -32000, "message": "raw", "data": {"x": 1}}
    assert normalize_rpc_error(original, server="s", tool="t", passthrough=True) == original
    for value, on in [
        ("1", True),
        ("true", True),
        ("TRUE", True),
        ("0", False),
        ("", False),
        ("yes", False),
    ]:
        assert passthrough_enabled({"WRAPPER_ERROR_PASSTHROUGH": value}) is on
    assert passthrough_enabled({}) is False


def test_spawn_errors_from_errno() -> None:
    enoent = spawn_error(
        FileNotFoundError(errno.ENOENT, "No such file or directory"), server="x", command="nope"
    )
    assert (
        enoent["message"]
        == "Spawn error: command not found. Check PATH or use the full path to 'nope' (server 'x')"
    )
    assert data(enoent) == ("spawn_error", False, "x", None)
    assert enoent["data"]["original"]["errno"] == errno.ENOENT
    eacces = spawn_error(errno.EACCES, server="x", command="/etc/passwd")
    assert eacces["message"].startswith(
        "Spawn error: permission denied. Check that '/etc/passwd' is executable"
    )


def test_a_child_that_exits_before_it_is_ready() -> None:
    error = exited_error(127, server="x", stderr_tail="sh: 1: nope: not found\n")
    assert (
        error["message"]
        == "Spawn error: command not found (the shell said: sh: 1: nope: not found) (server 'x')"
    )
    other = exited_error(
        1, server="x", stderr_tail="Traceback...\nImportError: no module named y\n"
    )
    assert (
        other["message"]
        == "Spawn error: exited with code 1 before it was ready: ImportError: no module named y (server 'x')"
    )
    assert data(other)[:2] == ("spawn_error", False)


def test_crashes_are_retryable_and_timeouts_are_not() -> None:
    assert data(crashed_error(server="s", tool="t"))[:2] == ("server_error", True)
    timeout = timeout_error(2.5, server="s", tool="t")
    assert timeout["code"] == -32001
    assert timeout["message"] == "Request timed out: no answer within 2.5 s (server 's', tool 't')"
    assert data(timeout)[:2] == ("server_error", False)


async def test_a_real_spawn_failure_from_the_client_library() -> None:
    with pytest.raises(SpawnError) as caught:
        async with Client.stdio(["/nonexistent/server-binary"]):
            pass
    error = normalize_exception(caught.value, server="ghost", command="/nonexistent/server-binary")
    assert error["message"].startswith(
        "Spawn error: no such file '/nonexistent/server-binary'. Check the path"
    )
    assert data(error)[:2] == ("spawn_error", False)


async def test_a_real_child_crash_mid_call_from_the_client_library() -> None:
    async with Client.stdio([sys.executable, str(BROKEN), "--tools", "crash,fail"]) as client:
        with pytest.raises(McpError) as failed:
            await client.call_tool(
                "fail", {"code": -32000, "message": "temporarily unavailable"}, retries=0
            )
        error = normalize_exception(failed.value, server="broken", tool="fail")
        assert data(error) == ("tool_error", True, "broken", "fail")
        with pytest.raises(ConnectionClosed) as crashed:
            await client.call_tool("crash", {}, retries=0, timeout=10)
    error = normalize_exception(crashed.value, server="broken", tool="crash")
    assert error["code"] == -32603 and data(error) == ("server_error", True, "broken", "crash")


def test_exceptions_map_like_their_errors() -> None:
    assert data(normalize_exception(RequestTimeout("tools/call", 3), server="s", tool="t"))[:2] == (
        "server_error",
        False,
    )
    assert normalize_exception(McpError(-32602, "bad"), server="s")["code"] == -32602
    assert data(normalize_exception(RuntimeError("boom"), server="s"))[:2] == ("server_error", True)


def test_a_needed_login_is_not_retryable_and_names_the_command_to_run() -> None:
    url = "https://mcp.example.com/mcp?team=a&x=1"
    for passthrough in (False, True):  # not the child's own error: always ours
        error = normalize_exception(
            NeedsLogin(url), server="remote", tool="search", passthrough=passthrough
        )
        assert error["code"] == -32000
        assert error["message"] == (
            f"{url}: needs login: run `codex-mcp-client login {url}` "
            "(server 'remote', tool 'search')"
        )
        assert error["data"]["retryable"] is False
        # Pasted into a shell, the `&` would end the command: quoted.
        assert login_command(error) == f"codex-mcp-client login '{url}'"
    assert login_command(normalize_exception(OSError("x"), server="s")) is None
    assert login_command({"code": 1, "message": "m", "data": []}) is None
