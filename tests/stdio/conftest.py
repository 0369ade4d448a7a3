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
        self._buffer = bytearray()
        self._scanned = 0  # bytes of _buffer already known to hold no newline

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

    def _fill(self, deadline: float) -> bool:
        """Append what the server wrote next; False at EOF."""
        assert self.process.stdout is not None
        fd = self.process.stdout.fileno()
        remaining = deadline - time.monotonic()
        if remaining <= 0 or not select.select([fd], [], [], remaining)[0]:
            raise TimeoutError("nothing more from the server in time")
        chunk = os.read(fd, 1 << 20)
        self._buffer += chunk
        return bool(chunk)

    def read_line(self, timeout: float = 10.0) -> bytes | None:
        """The next stdout line, or None at EOF. Each byte is searched for a newline once:
        rescanning the whole buffer per pipe read made a 64 MiB reply take tens of seconds."""
        deadline = time.monotonic() + timeout
        while (end := self._buffer.find(b"\n", self._scanned)) < 0:
            self._scanned = len(self._buffer)
            if not self._fill(deadline):
                return None
        line = bytes(self._buffer[:end])
        del self._buffer[: end + 1]
        self._scanned = 0
        return line

    def read_exactly(self, size: int, timeout: float = 10.0) -> bytes:
        """The next `size` bytes of stdout (a Content-Length body)."""
        deadline = time.monotonic() + timeout
        while len(self._buffer) < size:
            if not self._fill(deadline):
                raise AssertionError("the server closed stdout mid-frame")
        body = bytes(self._buffer[:size])
        del self._buffer[:size]
        self._scanned = 0
        return body

    def read(self, timeout: float = 10.0) -> Any:
        line = self.read_line(timeout)
        assert line is not None, "the server closed stdout"
        return orjson.loads(line)

    def read_frame(self, timeout: float = 10.0) -> Any:
        """The next Content-Length framed message."""
        length = None
        while True:
            line = self.read_line(timeout)
            assert line is not None, "the server closed stdout"
            line = line.rstrip(b"\r")
            if not line:
                break
            name, _, value = line.partition(b":")
            if name.strip().lower() == b"content-length":
                length = int(value)
        assert length is not None, "a header block without Content-Length"
        return orjson.loads(self.read_exactly(length, timeout))

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
