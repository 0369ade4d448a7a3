"""The gateway starts its stdio children before it imports the core, the client and the relay
(gateway/config/early.py), so a child starts while the gateway does, and its connection adopts that
process: one process per child, serving calls as any other.

The child here (a shell, up in a millisecond) stops the gateway (SIGSTOP) the moment it
starts, so what the gateway had imported by then can be read from its `-X importtime` log;
then it becomes our echo server (exec), and the test lets the gateway go on."""

from __future__ import annotations

import asyncio
import errno
import json
import os
import re
import signal
import subprocess
import sys
import threading
import urllib.request
from pathlib import Path

import pytest
from support.imports import entry_module, imported_modules, loaded
from support.polling import until_sync

ROOT = Path(__file__).resolve().parents[2]

#: What the gateway imports only after its children started: its serving comes last, after
#: the core and the client (before: the child started after all of it). Package rules, so a
#: file moved inside a package changes nothing here.
NOT_YET = ("codex_mcp.core", "codex_mcp.client", "codex_mcp.transports", "aiohttp")

#: Notes its start, stops its parent (the gateway), then runs our echo server.
CHILD = 'echo $$ >> "$0"; kill -STOP $PPID; exec "$1" "$2"'


def _listening(log: Path) -> str | None:
    found = re.search(r"listening on (http://\S+)", log.read_text())
    return found.group(1) if found else None


def _stopped(pid: int) -> bool:
    with open(f"/proc/{pid}/stat", encoding="ascii") as stat:
        return stat.read().rsplit(")", 1)[1].split()[0] == "T"


def _gateway_env(tmp_path: Path, script: str, starts: Path) -> dict[str, str]:
    """The environment of a gateway whose config has one child, `echo`: `script` run by
    /bin/sh with $0 the file it notes its start in, then our echo server."""
    command = ["/bin/sh", "-c", script, str(starts), sys.executable, str(ROOT / "cmd/mcp")]
    config = tmp_path / ".mcp.json"
    config.write_text(
        json.dumps({"mcpServers": {"echo": {"command": command[0], "args": command[1:]}}})
    )
    env = {key: value for key, value in os.environ.items() if not key.startswith("CODEX_MCP_")}
    env["CODEX_MCP_WRAPPER_CONFIG"] = str(config)
    return env


def _reap(gateway: subprocess.Popen[str] | subprocess.Popen[bytes]) -> None:
    try:
        gateway.wait(30)
    except subprocess.TimeoutExpired:
        gateway.kill()
        gateway.wait()


def test_a_child_starts_before_the_gateway_has_imported_itself(tmp_path: Path) -> None:
    starts, log = tmp_path / "starts", tmp_path / "gateway.log"
    env = _gateway_env(tmp_path, CHILD, starts)
    with log.open("w") as stderr:
        gateway = subprocess.Popen(
            [sys.executable, "-X", "importtime", str(ROOT / "cmd/mcp")],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=stderr,
            text=True,
            env=env,
            cwd=tmp_path,
        )
    try:
        until_sync(
            lambda: starts.exists() and _stopped(gateway.pid),
            60,
            "the child stopped the gateway",
            every=0.01,
        )
        imported_then = imported_modules(log.read_text().splitlines())
        gateway.send_signal(signal.SIGCONT)
        assert entry_module("codex-mcp") in imported_then  # the log is there
        assert loaded(imported_then, NOT_YET) == []

        assert gateway.stdin is not None and gateway.stdout is not None
        messages = [
            {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
                "protocolVersion": "2025-06-18", "capabilities": {},
                "clientInfo": {"name": "early", "version": "1"}}},
            {"jsonrpc": "2.0", "method": "notifications/initialized"},
            {"jsonrpc": "2.0", "id": 2, "method": "tools/call",
             "params": {"name": "echo__echo", "arguments": {"message": "adopted"}}},
        ]  # fmt: skip
        gateway.stdin.write("".join(json.dumps(m) + "\n" for m in messages))
        gateway.stdin.flush()
        answer: dict[str, object] = {}
        while answer.get("id") != 2:
            line = gateway.stdout.readline()
            assert line, "the gateway closed its stdout:\n" + log.read_text()[-2000:]
            answer = json.loads(line)
        assert "adopted" in json.dumps(answer["result"]), answer
        # The early process is the child: the gateway did not start another one.
        assert len(starts.read_text().split()) == 1
    finally:
        gateway.send_signal(signal.SIGCONT)
        if gateway.stdin is not None:
            gateway.stdin.close()
        _reap(gateway)


def test_codex_mcp_http_starts_its_children_before_importing_itself(tmp_path: Path) -> None:
    starts, log = tmp_path / "starts", tmp_path / "gateway.log"
    env = _gateway_env(tmp_path, CHILD, starts)
    with log.open("w") as stderr:
        gateway = subprocess.Popen(
            [sys.executable, "-X", "importtime", str(ROOT / "cmd/http"), "--port", "0"],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=stderr,
            env=env,
            cwd=tmp_path,
        )
    try:
        until_sync(
            lambda: starts.exists() and _stopped(gateway.pid),
            60,
            "the child stopped the gateway",
            every=0.01,
        )
        imported_then = imported_modules(log.read_text().splitlines())
        gateway.send_signal(signal.SIGCONT)
        assert entry_module("codex-mcp-http") in imported_then  # the log is there
        assert loaded(imported_then, NOT_YET) == []

        until_sync(lambda: _listening(log) is not None, 60, "the gateway listened", every=0.01)
        url = _listening(log)
        headers = {
            "Content-Type": "application/json",
            "Accept": "application/json, text/event-stream",
        }
        initialize = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "early", "version": "1"}}}  # fmt: skip
        assert url is not None
        request = urllib.request.Request(url, json.dumps(initialize).encode(), headers)
        with urllib.request.urlopen(request, timeout=60) as response:
            headers["Mcp-Session-Id"] = response.headers["Mcp-Session-Id"]
        call = {"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                "params": {"name": "echo__echo", "arguments": {"message": "adopted"}}}  # fmt: skip
        request = urllib.request.Request(url, json.dumps(call).encode(), headers)
        with urllib.request.urlopen(request, timeout=60) as response:
            assert "adopted" in response.read().decode()
        assert len(starts.read_text().split()) == 1  # no second child
    finally:
        gateway.send_signal(signal.SIGCONT)
        gateway.terminate()
        _reap(gateway)


#: Refuses pidfds in the process it is imported into, as a seccomp profile or a tracer can.
REFUSE_PIDFDS = """
import errno, os
def _refused(pid, flags=0):
    raise PermissionError(errno.EPERM, "pidfd_open refused")
os.pidfd_open = _refused
"""


def test_a_gateway_refused_pidfds_starts_its_children_the_ordinary_way(tmp_path: Path) -> None:
    """Where pidfd_open exists but is refused, the gateway neither hangs waiting for an adopted
    child nor starts one twice: its children start after the imports, as anywhere else."""
    starts, log = tmp_path / "starts", tmp_path / "gateway.log"
    (tmp_path / "site").mkdir()
    (tmp_path / "site" / "sitecustomize.py").write_text(REFUSE_PIDFDS)
    env = _gateway_env(tmp_path, 'echo $$ >> "$0"; exec "$1" "$2"', starts)
    env["PYTHONPATH"] = os.pathsep.join(
        [str(tmp_path / "site"), *filter(None, [os.environ.get("PYTHONPATH")])]
    )
    messages = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "no-pidfd", "version": "1"}}},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/call",
         "params": {"name": "echo__echo", "arguments": {"message": "ordinary"}}},
    ]  # fmt: skip
    with log.open("w") as stderr:
        gateway = subprocess.Popen(
            [sys.executable, str(ROOT / "cmd/mcp")],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=stderr,
            text=True,
            env=env,
            cwd=tmp_path,
        )
    answers: list[dict[str, object]] = []
    try:
        assert gateway.stdin is not None and gateway.stdout is not None
        gateway.stdin.write("".join(json.dumps(m) + "\n" for m in messages))
        gateway.stdin.flush()
        stdout = gateway.stdout

        def read() -> None:
            for line in stdout:
                answers.append(json.loads(line))

        reader = threading.Thread(target=read, daemon=True)
        reader.start()

        def answered() -> bool:
            assert reader.is_alive() or answers, "no answer:\n" + log.read_text()[-2000:]
            return any(answer.get("id") == 2 for answer in list(answers))

        until_sync(answered, 60, "the gateway answered the call", every=0.01)
        call = next(answer for answer in answers if answer.get("id") == 2)
        assert "ordinary" in json.dumps(call["result"]), call
        assert len(starts.read_text().split()) == 1  # one child, started once
    finally:
        if gateway.stdin is not None:
            gateway.stdin.close()
        _reap(gateway)


async def test_an_adopted_child_whose_pidfd_is_refused_is_waited_for_off_the_loop(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The transport's fallback when a child's pidfd is refused: its exit is still awaited,
    and the loop goes on meanwhile (a blocking wait would stop every other connection)."""
    from codex_mcp.client.transports.adopted import adopt

    def refused(pid: int, flags: int = 0) -> int:
        raise PermissionError(errno.EPERM, "pidfd_open refused")

    monkeypatch.setattr(os, "pidfd_open", refused)
    # Exits when its stdin closes; SIGALRM ends it if nothing ever does.
    code = "import signal, sys; signal.alarm(60); sys.stdin.read()"
    popen = subprocess.Popen(
        [sys.executable, "-c", code],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        process = await asyncio.wait_for(adopt(popen, 64 * 1024), 30)
        assert process.returncode is None  # adopt returned while the child runs
        assert process.stdin is not None
        process.stdin.close()
        assert await asyncio.wait_for(process.wait(), 30) == 0
    finally:
        if popen.poll() is None:
            popen.kill()
            popen.wait()
