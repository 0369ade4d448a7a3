"""The broken server misbehaves as documented (the serving tests rely on it): raw pipes, a
real subprocess, and every wait is on a line the server writes."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

import pytest

SERVER = [sys.executable, str(Path(__file__).parent / "servers" / "broken_server.py")]


class Raw:
    """The server on raw pipes: send lines, read lines."""

    def __init__(self, *args: str, env: dict[str, str] | None = None) -> None:
        self.process = subprocess.Popen(
            [*SERVER, *args],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
        )

    @property
    def stdout(self) -> IO[str]:
        assert self.process.stdout is not None
        return self.process.stdout

    @property
    def stderr(self) -> IO[str]:
        assert self.process.stderr is not None
        return self.process.stderr

    def send(self, message: dict[str, Any]) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(json.dumps(message) + "\n")
        self.process.stdin.flush()

    def request(self, request_id: int, method: str, params: dict[str, Any] | None = None) -> None:
        self.send({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params or {}})

    def message(self) -> dict[str, Any]:
        """The next JSON-RPC message, skipping anything else the server prints."""
        while True:
            line = self.stdout.readline()
            assert line, "the server closed stdout"
            try:
                message = json.loads(line)
            except ValueError:
                continue
            if isinstance(message, dict) and message.get("jsonrpc") == "2.0":
                return message

    def close(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
        self.process.wait(10)
        for stream in (self.process.stdin, self.process.stdout, self.process.stderr):
            if stream is not None:
                stream.close()


@pytest.fixture
def raw() -> Iterator[list[Raw]]:
    started: list[Raw] = []
    yield started
    for server in started:
        server.close()


def start(raw: list[Raw], *args: str, env: dict[str, str] | None = None) -> Raw:
    server = Raw(*args, env=env)
    raw.append(server)
    return server


def test_it_lists_the_chosen_tools_and_custom_ones(raw: list[Raw]) -> None:
    custom = [{"name": "x", "inputSchema": True}, {"name": "x", "inputSchema": {}}]
    server = start(
        raw,
        "--tools",
        "echo,snake_case",
        "--extra-tools",
        "e1",
        "--custom-tools",
        json.dumps(custom),
    )
    server.request(1, "tools/list")
    tools = server.message()["result"]["tools"]
    assert [t["name"] for t in tools] == ["echo", "snake_case", "e1", "x", "x"]
    assert "input_schema" in tools[1] and tools[3]["inputSchema"] is True


def test_garbage_on_stdout_around_every_message(raw: list[Raw]) -> None:
    server = start(raw, "--tools", "echo", "--garbage")
    server.request(1, "ping")
    assert server.stdout.readline().startswith("this line is not JSON-RPC")
    assert json.loads(server.stdout.readline()) == {
        "hello": "a JSON object that is no JSON-RPC message"
    }
    assert json.loads(server.stdout.readline()) == {"jsonrpc": "2.0", "id": 1, "result": {}}


def test_a_stderr_flood(raw: list[Raw]) -> None:
    server = start(raw, "--stderr-flood", "100000")
    flood = server.stderr.readline()
    assert len(flood) >= 100000 and flood.startswith("flood flood")
    assert server.stderr.readline() == "broken server: ready\n"


def test_options_from_the_environment(raw: list[Raw]) -> None:
    env = {"BROKEN_TOOLS": "fail", "BROKEN_NAME": "from-env", "PATH": "/usr/bin:/bin"}
    server = start(raw, env=env)
    server.request(1, "initialize", {"protocolVersion": "2025-06-18"})
    assert server.message()["result"]["serverInfo"]["name"] == "from-env"
    server.request(
        2, "tools/call", {"name": "fail", "arguments": {"code": -32050, "message": "no"}}
    )
    assert server.message()["error"] == {"code": -32050, "message": "no", "data": {"detail": "x"}}


def test_exit_on_start(raw: list[Raw]) -> None:
    server = start(raw, "--exit-on-start", "7")
    assert server.process.wait(10) == 7
    assert "exiting at start with code 7" in server.stderr.read()


def test_a_slow_tool_does_not_hold_up_the_others_and_crash_exits(raw: list[Raw]) -> None:
    server = start(raw, "--tools", "slow,echo,crash")
    assert server.stderr.readline() == "broken server: ready\n"
    server.request(1, "tools/call", {"name": "slow", "arguments": {"seconds": 30}})
    assert server.stderr.readline() == "slow: started\n"
    server.request(2, "tools/call", {"name": "echo", "arguments": {"message": "meanwhile"}})
    assert server.message() == {
        "jsonrpc": "2.0",
        "id": 2,
        "result": {"content": [{"type": "text", "text": "meanwhile"}]},
    }
    server.request(3, "tools/call", {"name": "crash", "arguments": {}})
    assert server.process.wait(10) == 3
    assert server.stderr.readline() == "crash: exiting\n"


def test_add_tool_sends_list_changed(raw: list[Raw]) -> None:
    server = start(raw, "--tools", "add_tool")
    server.request(1, "tools/call", {"name": "add_tool", "arguments": {}})
    assert server.message() == {"jsonrpc": "2.0", "method": "notifications/tools/list_changed"}
    assert server.message()["id"] == 1
    server.request(2, "tools/list")
    assert [t["name"] for t in server.message()["result"]["tools"]] == ["add_tool", "added"]


def test_slow_list_and_bad_input(raw: list[Raw]) -> None:
    server = start(raw, "--tools", "echo", "--slow-list", "0.2")
    assert server.process.stdin is not None
    server.process.stdin.write("not json\n")
    server.process.stdin.flush()
    assert server.message()["error"]["code"] == -32700
    server.request(1, "resources/list")
    assert server.message()["error"]["code"] == -32601
    server.request(2, "tools/list")
    assert [t["name"] for t in server.message()["result"]["tools"]] == ["echo"]
