"""A real stdio server subprocess and a line-level client for it."""

from __future__ import annotations

import os
import select
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson
import pytest

ROOT = Path(__file__).resolve().parents[2]
SERVERS = Path(__file__).parent / "servers"


class StdioServer:
    def __init__(self, *args: str, env: dict[str, str] | None = None) -> None:
        self.process = subprocess.Popen(
            [sys.executable, str(ROOT / "cmd/mcp"), *args],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=env,
        )
        self._buffer = b""

    def write(self, data: bytes) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(data)
        self.process.stdin.flush()

    def send(self, message: Any) -> None:
        self.write(orjson.dumps(message) + b"\n")

    def request(self, request_id: Any, method: str, params: Any = None) -> None:
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "method": method}
        if params is not None:
            message["params"] = params
        self.send(message)

    def read_line(self, timeout: float = 10.0) -> bytes | None:
        """The next stdout line, or None at EOF."""
        assert self.process.stdout is not None
        fd = self.process.stdout.fileno()
        deadline = time.monotonic() + timeout
        while b"\n" not in self._buffer:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise TimeoutError("no line from the server")
            ready, _, _ = select.select([fd], [], [], remaining)
            if ready:
                chunk = os.read(fd, 1 << 20)
                if not chunk:
                    return None
                self._buffer += chunk
        line, _, self._buffer = self._buffer.partition(b"\n")
        return line

    def read(self, timeout: float = 10.0) -> Any:
        line = self.read_line(timeout)
        assert line is not None, "the server closed stdout"
        return orjson.loads(line)

    def call(self, request_id: Any, method: str, params: Any = None) -> Any:
        self.request(request_id, method, params)
        return self.read()

    def initialize(self, version: str = "2025-06-18") -> Any:
        reply = self.call(
            0,
            "initialize",
            {
                "protocolVersion": version,
                "capabilities": {},
                "clientInfo": {"name": "t", "version": "1"},
            },
        )
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        return reply

    def assert_alive(self) -> None:
        assert self.call("alive", "ping") == {"jsonrpc": "2.0", "id": "alive", "result": {}}

    def close_stdin(self) -> None:
        assert self.process.stdin is not None
        self.process.stdin.close()

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGKILL)
        self.process.wait(10)


@pytest.fixture
def server() -> Iterator[StdioServer]:
    peer = StdioServer()
    peer.initialize()
    yield peer
    peer.stop()


@pytest.fixture
def spawn() -> Iterator[Any]:
    started: list[StdioServer] = []

    def start(*args: str) -> StdioServer:
        peer = StdioServer(*args)
        started.append(peer)
        return peer

    yield start
    for peer in started:
        peer.stop()
