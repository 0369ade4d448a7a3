"""A real stdio server subprocess (the examples server) spoken to line by line."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from support.processes import StdioServer

from .stateless_helpers import EXAMPLES, params


class StatelessStdio(StdioServer):
    """StdioServer plus reading until the answer to one request id arrives."""

    _polls = 0

    def answer(self, request_id: Any, timeout: float = 10.0) -> tuple[Any, list[Any]]:
        """The answer to `request_id`, and every message read before it."""
        before: list[Any] = []
        while True:
            message = self.read(timeout)
            if message.get("id") == request_id and "method" not in message:
                return message, before
            before.append(message)

    def ask(self, request_id: Any, method: str, params: Any) -> Any:
        self.request(request_id, method, params)
        return self.answer(request_id)[0]

    def task_until(self, task_id: str, done: Callable[[Any], bool], timeout: float = 10.0) -> Any:
        """Poll tasks/get (as a client does) until `done(task)` or the timeout."""
        deadline = time.monotonic() + timeout
        while True:
            self._polls += 1
            task = self.ask(f"poll-{self._polls}", "tasks/get", params(taskId=task_id))["result"]
            if done(task) or time.monotonic() > deadline:
                return task
            time.sleep(0.02)


@pytest.fixture
def examples() -> Iterator[Any]:
    started: list[StatelessStdio] = []

    def start(*args: str, env: dict[str, str] | None = None) -> StatelessStdio:
        peer = StatelessStdio("--serve", str(EXAMPLES), *args, env=env)
        started.append(peer)
        return peer

    yield start
    for peer in started:
        peer.stop()
