"""`list_changed` to a session is debounced and written apart (internal/mcp/list_changed.py):
the first change goes out at once, before the answer of the call that made it; the changes
that follow within the delay are one more notification after it; none is lost; and no
notification shares a write with an answer (Codex's app-server was seen to leave a call
unanswered when one came in the same burst as the call's result, issue 32)."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson
import pytest
from codex_mcp.core.framing import FrameDecoder
from codex_mcp.core.jsonrpc import notification
from codex_mcp.core.list_changed import LIST_CHANGED_DELAY
from codex_mcp.transports.stdio import StdioOutbound
from support.polling import until
from support.processes import StdioServer

SERVER = str(Path(__file__).parent / "servers" / "changing_tools.py")
CHANGED = "notifications/tools/list_changed"


@pytest.fixture
def server() -> Iterator[StdioServer]:
    process = StdioServer("--serve", SERVER)
    process.initialize()
    yield process
    process.stop()


def call(server: StdioServer, request_id: int, tool: str, **arguments: Any) -> list[Any]:
    """Call `tool`; what the server sent until its answer, the answer last."""
    return ask(server, request_id, "tools/call", {"name": tool, "arguments": arguments})


def ask(server: StdioServer, request_id: int, method: str, params: Any = None) -> list[Any]:
    """Send a request; what the server sent until its answer, the answer last."""
    server.request(request_id, method, params)
    seen = []
    while True:
        message = server.read(timeout=30)
        seen.append(message)
        if message.get("id") == request_id:
            return seen


def changes(messages: list[Any]) -> int:
    return sum(m.get("method") == CHANGED for m in messages)


def test_a_burst_on_the_loop_is_announced_before_the_answer_and_once_after(
    server: StdioServer,
) -> None:
    """200 changes made in one step of the loop (a tool that never awaits): the delay's timer
    cannot run among them, so whatever the machine's load the first is announced at once,
    before the answer, and the other 199 are exactly one more notification (before the answer
    when the loop gets to the timer before the answer's write, else right after it)."""
    seen = call(server, 1, "burst", count=200)
    assert "200 added" in str(seen[-1]["result"]), seen[-1]
    assert changes(seen[:1]) == 1, seen  # the first change, at once: before the answer
    if changes(seen) == 1:
        assert server.read(timeout=10)["method"] == CHANGED
    else:
        assert changes(seen) == 2, seen
    quiet = call(server, 2, "noop")
    assert changes(quiet) == 0, quiet
    listed = ask(server, 3, "tools/list")[-1]["result"]["tools"]
    assert {f"added_{n}" for n in range(1, 201)} <= {t["name"] for t in listed}


def test_a_burst_from_a_thread_is_announced_before_the_answer_and_folded(
    server: StdioServer,
) -> None:
    """200 changes from a worker thread, each handed to the loop: the loop runs between them,
    so a burst longer than the delay is announced once per delay it spans (decision 72: at
    most one per LIST_CHANGED_DELAY), never once per change. The first is announced before
    the answer; after the answer at most one more (the delay the last change fell in)."""
    started = time.monotonic()
    seen = call(server, 1, "burst_in_thread", count=200)
    answered = time.monotonic()
    assert "200 added" in str(seen[-1]["result"]), seen[-1]
    before = changes(seen)
    assert before >= 1 and seen[0]["method"] == CHANGED, seen
    if answered - started < LIST_CHANGED_DELAY:
        # The burst fit in the first delay (the unloaded case): the other 199 changes are
        # one notification when it is over, after the answer.
        assert before == 1, seen
        assert server.read(timeout=10)["method"] == CHANGED
        after = 1 + changes(call(server, 2, "noop"))
    else:
        after = changes(call(server, 2, "noop"))
    listed = ask(server, 3, "tools/list")
    after += changes(listed)
    span = time.monotonic() - started  # every notification counted was sent within it
    assert after <= 1, (before, after)
    # Notifications at least LIST_CHANGED_DELAY apart, within `span`: the fold, by time.
    assert before + after <= 1 + span / LIST_CHANGED_DELAY, (before, after, span)
    assert {f"added_{n}" for n in range(1, 201)} <= {
        t["name"] for t in listed[-1]["result"]["tools"]
    }


def test_no_change_is_left_unannounced(server: StdioServer) -> None:
    """Calls close together: each change is announced before its call's answer or, when it
    fell in the delay of the one before, by a notification right after it."""
    for request_id in range(1, 31):
        seen = call(server, request_id, "burst_in_thread" if request_id % 2 else "burst", count=1)
        if not changes(seen):
            assert server.read(timeout=10)["method"] == CHANGED, request_id
    names = {t["name"] for t in server.call(99, "tools/list")["result"]["tools"]}
    assert {f"added_{n}" for n in range(1, 31)} <= names


async def test_a_notification_sent_apart_never_shares_a_write() -> None:
    """What one loop turn sends is one write; a list_changed sent apart splits it: the
    answers before it, it alone, the answers after it."""
    writes: list[bytes] = []
    decoder = FrameDecoder(1 << 20)
    decoder.mode = "ndjson"
    outbound = StdioOutbound(decoder, writes.append, asyncio.get_running_loop())
    answer = {"jsonrpc": "2.0", "id": 1, "result": {}}
    later = {"jsonrpc": "2.0", "id": 2, "result": {}}
    outbound.send(answer)
    outbound.send_apart(notification(CHANGED))
    outbound.send(later)
    await asyncio.sleep(0)  # the turn ends: what is pending is written
    assert [orjson.loads(w) for w in writes] == [answer, notification(CHANGED), later]


async def test_apart_also_behind_an_answer_waiting_for_the_clients_read() -> None:
    """An answer after its call's progress waits until the client has read the progress
    (decisions.md, 64); a list_changed sent meanwhile waits its turn behind it and still
    goes alone: neither with that answer nor with the next one."""
    writes: list[bytes] = []
    unread = [1]  # bytes the client has not read: set to 0 when it has
    decoder = FrameDecoder(1 << 20)
    decoder.mode = "ndjson"
    outbound = StdioOutbound(
        decoder, writes.append, asyncio.get_running_loop(), unread=lambda: unread[0]
    )
    progress = notification("notifications/progress", {"progressToken": 1, "progress": 1})
    answer = {"jsonrpc": "2.0", "id": 1, "result": {}}
    later = {"jsonrpc": "2.0", "id": 2, "result": {}}
    outbound.send(progress, 1)
    outbound.send(answer, 1)  # waits for the client to read the progress
    outbound.send_apart(notification(CHANGED))
    outbound.send(later, 2)
    await asyncio.sleep(0)
    assert [orjson.loads(w) for w in writes] == [progress]
    unread[0] = 0
    await until(lambda: len(writes) == 4, 10, lambda: writes)
    assert [orjson.loads(w) for w in writes] == [progress, answer, notification(CHANGED), later]
