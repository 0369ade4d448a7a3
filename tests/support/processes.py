"""One launcher per kind of process the tests start: our HTTP server (`cmd/http`), our stdio
server (`cmd/mcp`, which is also the gateway), and waiting for any other to listen on a port."""

from __future__ import annotations

import os
import re
import select
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import orjson

from support.polling import until_sync

ROOT = Path(__file__).resolve().parents[2]
CMD_HTTP = str(ROOT / "cmd/http")
CMD_MCP = str(ROOT / "cmd/mcp")


def free_port() -> int:
    """A loopback port free right now (for peers that cannot be told to pick one)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def wait_for_port(
    port: int, process: subprocess.Popen[Any], what: str = "the server", timeout: float = 20.0
) -> None:
    """Until `process` accepts connections on 127.0.0.1:`port`; fails at once if it exits."""

    def listening() -> bool:
        assert process.poll() is None, f"{what} exited with {process.returncode}"
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
        except OSError:
            return False
        return True

    until_sync(listening, timeout, f"{what} listening on port {port}")


class HttpProcess:
    """A `codex-mcp-http --port 0 ARGS` subprocess (or `command`, any HTTP server that logs
    "listening on URL"); stderr is drained in a thread (a full pipe would block the server)
    and kept for assertions, in `lines` when given."""

    def __init__(
        self,
        *args: str,
        command: Sequence[str] | None = None,
        lines: list[str] | None = None,
        python: Sequence[str] = (),
        env: dict[str, str] | None = None,
        cwd: Path | None = None,
        preexec_fn: Callable[[], None] | None = None,
    ) -> None:
        self.process = subprocess.Popen(
            command or [sys.executable, *python, CMD_HTTP, "--port", "0", *args],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
            cwd=cwd,
            preexec_fn=preexec_fn,  # e.g. lower a resource limit in the server alone
        )
        self.lines: list[str] = [] if lines is None else lines
        self._listening = threading.Event()
        self.url = ""
        self._drainer = threading.Thread(target=self._drain, daemon=True)
        self._drainer.start()
        if not self._listening.wait(60):
            self.stop()
            raise AssertionError("the HTTP server did not start:\n" + self.stderr)

    def _drain(self) -> None:
        assert self.process.stderr is not None
        for line in self.process.stderr:
            self.lines.append(line)
            found = re.search(r"listening on (http://\S+)", line)
            if found and not self.url:
                self.url = found.group(1)
                self._listening.set()

    @property
    def base(self) -> str:
        """The URL without the trailing /mcp."""
        return self.url.rsplit("/mcp", 1)[0]

    @property
    def pid(self) -> int:
        return self.process.pid

    @property
    def stderr(self) -> str:
        return "".join(self.lines)

    def wait_for_line(self, pattern: str, timeout: float = 5) -> str:
        def matching() -> str | None:
            return next((line for line in list(self.lines) if re.search(pattern, line)), None)

        try:
            found: str = until_sync(matching, timeout, every=0.02)
        except AssertionError:
            raise AssertionError(f"no stderr line matching {pattern!r}:\n{self.stderr}") from None
        return found

    def stop(self) -> int:
        if self.process.poll() is None:
            self.process.terminate()
        try:
            return self.process.wait(15)
        except subprocess.TimeoutExpired:
            self.process.kill()
            return self.process.wait(5)

    def logged(self, timeout: float = 10) -> list[str]:
        """Every line it logged, once its stderr ended (after `stop`)."""
        self._drainer.join(timeout)
        return self.lines


class StdioServer:
    """A `codex-mcp` stdio server subprocess spoken to line by line (or frame by frame)."""

    def __init__(self, *args: str, env: dict[str, str] | None = None) -> None:
        self.process = subprocess.Popen(
            [sys.executable, CMD_MCP, *args],
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
