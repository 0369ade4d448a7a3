"""A real `codex-mcp-http` subprocess for the HTTP tests (imported by name, not through
conftest, which pytest may load under another module's name)."""

from __future__ import annotations

import re
import subprocess
import sys
import threading
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from aiohttp.test_utils import TestClient

ROOT = Path(__file__).resolve().parents[2]
SERVERS = Path(__file__).resolve().parent / "servers"

MakeClient = Callable[..., Awaitable[TestClient[Any, Any]]]


class HttpProcess:
    """A `codex-mcp-http` subprocess; stderr is drained in a thread (a full pipe would
    block the server) and kept for assertions."""

    def __init__(
        self,
        *args: str,
        env: dict[str, str] | None = None,
        preexec_fn: Callable[[], None] | None = None,
    ) -> None:
        self.process = subprocess.Popen(
            [sys.executable, str(ROOT / "cmd/http"), "--port", "0", *args],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
            preexec_fn=preexec_fn,  # e.g. lower a resource limit in the server alone
        )
        self.lines: list[str] = []
        self._listening = threading.Event()
        self.url = ""
        threading.Thread(target=self._drain, daemon=True).start()
        if not self._listening.wait(20):
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
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            for line in list(self.lines):
                if re.search(pattern, line):
                    return line
            time.sleep(0.02)
        raise AssertionError(f"no stderr line matching {pattern!r}:\n{self.stderr}")

    def stop(self) -> int:
        if self.process.poll() is None:
            self.process.terminate()
        try:
            return self.process.wait(15)
        except subprocess.TimeoutExpired:
            self.process.kill()
            return self.process.wait(5)
