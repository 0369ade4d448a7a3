"""Each request runs in a task of its own, so tools can use task-bound asyncio features.

(On Python 3.12+ a request's first step runs eagerly; these hold either way.)"""

from __future__ import annotations

from typing import Any

from .conftest import SERVERS, StdioServer


def _text(reply: Any) -> str:
    return str(reply["result"]["content"][0]["text"])


def test_asyncio_timeout_in_a_tool_ends_only_that_call(spawn: Any) -> None:
    peer: StdioServer = spawn("--serve", str(SERVERS / "task_aware.py"))
    peer.initialize()
    peer.request(1, "tools/call", {"name": "bounded_wait", "arguments": {"limit": 0.2}})
    peer.request(2, "tools/call", {"name": "my_task", "arguments": {"pause": 0.5}})
    peer.assert_alive()  # answered while both calls are still waiting
    replies = {reply["id"]: reply for reply in (peer.read(), peer.read())}
    assert _text(replies[1]) == "timed out"
    assert _text(replies[2]).isdigit()
    peer.assert_alive()


def test_every_call_has_its_own_task(spawn: Any) -> None:
    peer: StdioServer = spawn("--serve", str(SERVERS / "task_aware.py"))
    peer.initialize()
    for request_id in range(10, 14):
        peer.request(request_id, "tools/call", {"name": "my_task", "arguments": {"pause": 0.2}})
    tasks = {_text(peer.read()) for _ in range(4)}
    assert len(tasks) == 4
    # And a call that never waits still gets a task of its own.
    assert _text(peer.call(20, "tools/call", {"name": "my_task", "arguments": {}})).isdigit()


def test_a_tool_answered_inline_does_not_leak_context_to_later_calls(spawn: Any) -> None:
    peer: StdioServer = spawn("--serve", str(SERVERS / "task_aware.py"))
    peer.initialize()
    seen = [
        _text(peer.call(30 + n, "tools/call", {"name": "tag_once", "arguments": {"tag": f"t{n}"}}))
        for n in range(3)
    ]
    assert seen == ["unset", "unset", "unset"]


def test_a_tool_answered_inline_fails_like_any_other(spawn: Any) -> None:
    peer: StdioServer = spawn("--serve", str(SERVERS / "task_aware.py"))
    peer.initialize()
    refused = peer.call(40, "tools/call", {"name": "fail_at_once", "arguments": {"kind": "tool"}})
    assert refused["result"] == {
        "content": [{"type": "text", "text": "refused on purpose"}],
        "isError": True,
    }
    broken = peer.call(41, "tools/call", {"name": "fail_at_once", "arguments": {"kind": "bug"}})
    assert broken["result"]["isError"] is True
    assert "broken on purpose" in _text(broken)
    bad = peer.call(42, "tools/call", {"name": "fail_at_once", "arguments": {}})
    assert "kind: Field required" in _text(bad)
    peer.assert_alive()
