"""Fuzz a real `codex-mcp` subprocess over its pipes.

Messages go out in writes of one to eight, each write ending with a ping of its own; the
ping's answer closes the write's window. Every request with a valid id must be answered
exactly once, no reply may carry an id we did not send, replies with a null id must fit
what the write's messages allow, stdout must carry nothing but JSON, the server must log
no traceback, still serve a normal call at the end, exit 0 on EOF, and its RSS stay flat.
"""

from __future__ import annotations

import queue
import threading
import time
from collections import Counter
from pathlib import Path
from typing import Any

import orjson
import pytest
from support.processes import StdioServer

from .checker import Ledger
from .expectations import Expect
from .messages import (
    ASK,
    MAIN_KINDS,
    NULL_ID_NOTIFICATION,
    UNHASHABLE_ID_RESPONSE,
    Fuzzer,
)
from .settings import (
    MAX_MESSAGE_BYTES,
    MESSAGES,
    ODD_MESSAGES,
    SEED,
    rss_growth_limit_kib,
    rss_kib,
)

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples/everything_server.py"
WINDOW_TIMEOUT = 15.0
#: Slow calls sleep 20 ms, and a tool that asked us finishes once answered.
SETTLE_TIMEOUT = 5.0


class StdioFuzz:
    def __init__(
        self, peer: StdioServer, fuzzer: Fuzzer, context: str, bad_replies: bool = False
    ) -> None:
        self.peer = peer
        self.fuzzer = fuzzer
        self.ledger = Ledger(context)
        self.bad_replies = bad_replies
        self.questions: list[Any] = []  # the server's requests, answered in the next write
        self.stderr: list[bytes] = []
        self._writes: queue.Queue[bytes | None] = queue.Queue()
        self._windows = 0
        # A writer and a stderr reader of their own: a blocking write of a big message
        # while the server waits for us to read its answers would deadlock both sides.
        threading.Thread(target=self._write_all, daemon=True).start()
        threading.Thread(target=self._read_stderr, daemon=True).start()

    def _write_all(self) -> None:
        while (data := self._writes.get()) is not None:
            try:
                self.peer.write(data)
            except (BrokenPipeError, ValueError):
                return

    def _read_stderr(self) -> None:
        assert self.peer.process.stderr is not None
        self.stderr.extend(self.peer.process.stderr)

    def send(self, count: int) -> int:
        """Send `count` fuzz messages, checking each write's window; returns how many."""
        sent = 0
        while sent < count:
            cases = [self.fuzzer.case() for _ in range(min(count - sent, self.size()))]
            sent += len(cases)
            replies = [
                reply
                for question in self.questions
                for reply in self.fuzzer.replies_to(question, self.bad_replies)
            ]
            self.questions = []
            self._windows += 1
            sync = f"sync-{self._windows}"
            window = Expect()
            waited: Counter[Any] = Counter()
            for case in cases:
                window.add(case.expect)
                if not case.slow:
                    waited.update(case.expect.must)
                self.ledger.expect(case.expect)
            self.ledger.expect(Expect(must=Counter([sync])))
            ping = orjson.dumps({"jsonrpc": "2.0", "id": sync, "method": "ping"})
            lines = [*replies, *(case.body for case in cases), ping]
            self._writes.put(b"".join(line + b"\n" for line in lines))
            where = f"write {self._windows}: " + ", ".join(case.kind for case in cases)
            nulls_before = self.ledger.nulls
            waited[sync] += 1
            deadline = time.monotonic() + WINDOW_TIMEOUT
            while self.ledger.missing(waited):
                self.read_one(deadline, where)
            self.ledger.check_nulls(window, self.ledger.nulls - nulls_before, where)
        return sent

    def size(self) -> int:
        return self.fuzzer.random.randrange(1, 9)

    def read_one(self, deadline: float, where: str) -> None:
        remaining = deadline - time.monotonic()
        try:
            line = self.peer.read_line(timeout=max(remaining, 0.001))
        except TimeoutError:
            missing = [repr(i)[:40] for i in self.ledger.missing()[:5]]
            raise AssertionError(
                f"{self.ledger.context}: no answer in time for {missing} ({where})"
            ) from None
        assert line is not None, f"{self.ledger.context}: the server closed stdout ({where})"
        try:
            message = orjson.loads(line)
        except orjson.JSONDecodeError:
            raise AssertionError(f"not JSON on stdout: {line[:200]!r} ({where})") from None
        if type(message) is dict and "method" in message and "id" in message:
            self.questions.append(message)  # the server asks: answered with the next write
            return
        self.ledger.take(message, where)

    def settle(self) -> None:
        """Wait for the slow calls still running, answering what the server still asks."""
        deadline = time.monotonic() + SETTLE_TIMEOUT
        while self.ledger.missing():
            questions, self.questions = self.questions, []
            replies = [r for q in questions for r in self.fuzzer.replies_to(q, self.bad_replies)]
            if replies:
                self._writes.put(b"".join(reply + b"\n" for reply in replies))
            self.read_one(deadline, "the slow calls")

    def finish(self) -> str:
        """A normal call still works; then EOF: exit 0, nothing but JSON to the end."""
        echo = {"name": "echo", "arguments": {"message": "still here"}}
        self.peer.request("final", "tools/call", echo)
        self.ledger.expect(Expect(must=Counter(["final"])))
        deadline = time.monotonic() + WINDOW_TIMEOUT
        while self.ledger.missing():
            self.read_one(deadline, "the final call")
        self._writes.put(None)
        self.peer.close_stdin()
        trailing = self.peer.read_line(timeout=WINDOW_TIMEOUT)
        assert trailing is None, f"output after every request was answered: {trailing!r}"
        assert self.peer.process.wait(10) == 0
        return b"".join(self.stderr).decode(errors="replace")


def run_stdio_fuzz(
    version: str,
    kinds: dict[str, int],
    messages: int,
    *,
    serve: Path | None = None,
    bad_replies: bool = False,
) -> dict[str, Any]:
    context = f"stdio fuzz, seed {SEED}, protocol {version}, kinds {sorted(kinds)}"
    fuzzer = Fuzzer(
        SEED, batches=version < "2025-06-18", kinds=kinds, max_message_bytes=MAX_MESSAGE_BYTES
    )
    options = ["--max-message-bytes", str(MAX_MESSAGE_BYTES), "--log-level", "warning"]
    peer = StdioServer(*options, *(["--serve", str(serve)] if serve else []))
    try:
        peer.call(
            0,
            "initialize",
            {
                "protocolVersion": version,
                "capabilities": {"sampling": {}, "elicitation": {}},
                "clientInfo": {"name": "fuzz", "version": "1"},
            },
        )
        peer.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        if ASK in kinds:
            answer_one_elicitation(peer)
        fuzz = StdioFuzz(peer, fuzzer, context, bad_replies)
        started = time.monotonic()
        warm_up = max(1, messages // 10)
        fuzz.send(warm_up)
        rss_before = rss_kib(peer.process.pid)
        fuzz.send(messages - warm_up)
        fuzz.settle()
        rss_after = rss_kib(peer.process.pid)
        seconds = time.monotonic() - started
        stderr = fuzz.finish()
    finally:
        peer.stop()
    assert "Traceback" not in stderr, f"{context}: the server logged a traceback:\n{stderr}"
    figures = {
        "messages": messages,
        "seconds": round(seconds, 2),
        "replies": fuzz.ledger.replies,
        "null_id_replies": fuzz.ledger.nulls,
        "rss_before_kib": rss_before,
        "rss_after_kib": rss_after,
    }
    print(f"\n{context}: {figures}")
    limit = rss_growth_limit_kib(messages)
    assert rss_after - rss_before < limit, f"{context}: RSS grew over {limit} KiB: {figures}"
    return figures


def answer_one_elicitation(peer: StdioServer) -> None:
    """One elicitation answered before the fuzz: what the server pays once (importing the
    validator that checks an answer against its schema) is not growth under the fuzz."""
    call = {"name": "test_elicitation", "arguments": {"message": "m"}}
    peer.request("warm-up", "tools/call", call)
    asked = orjson.loads(peer.read_line() or b"null")
    assert asked["method"] == "elicitation/create", asked
    content = {"username": "fuzz", "email": "f@z"}
    peer.send(
        {"jsonrpc": "2.0", "id": asked["id"], "result": {"action": "accept", "content": content}}
    )
    answered = orjson.loads(peer.read_line() or b"null")
    assert answered["id"] == "warm-up" and "result" in answered, answered


@pytest.mark.parametrize("version", ["2025-06-18", "2025-03-26"])
def test_stdio_survives_the_fuzz(version: str) -> None:
    """2025-03-26 allows batches: nested, empty, mixed, of non-objects, with duplicate ids."""
    run_stdio_fuzz(version, MAIN_KINDS, MESSAGES)


def test_stdio_fuzz_while_the_server_asks_us_things() -> None:
    """Tools that ask the client (sampling, elicitation), answered the way a good client
    answers: a result, an error, or first a reply naming an id we were not asked."""
    kinds = {kind: weight for kind, weight in MAIN_KINDS.items() if kind != UNHASHABLE_ID_RESPONSE}
    run_stdio_fuzz("2025-06-18", {**kinds, ASK: 10}, MESSAGES // 2, serve=EXAMPLES)


def test_stdio_fuzz_with_malformed_replies_to_the_servers_requests() -> None:
    run_stdio_fuzz(
        "2025-06-18", {**MAIN_KINDS, ASK: 10}, ODD_MESSAGES, serve=EXAMPLES, bad_replies=True
    )


def test_stdio_fuzz_with_null_id_notifications() -> None:
    run_stdio_fuzz("2025-03-26", {**MAIN_KINDS, NULL_ID_NOTIFICATION: 10}, ODD_MESSAGES)
