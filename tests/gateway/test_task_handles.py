"""The gateway's 2025-11-25 task handle table (relay/task_handles.py) as bookkeeping alone: no
process, no event loop, the time given. Bound to the session that made each, bounded per
session and in all (the oldest that ended makes room), dropped at its ttl or a while after its
end, and what each holds open let go exactly once."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest
from codex_mcp.core.errors import McpError
from codex_mcp.core.jsonrpc import INVALID_REQUEST
from codex_mcp.gateway.relay.task_handles import (
    KEEP_ENDED_SECONDS,
    MAX_TTL_MS,
    Handle,
    TaskHandles,
)

WHERE: Any = SimpleNamespace(inflight=object())  # the connection a task was made on


def _handle(session: Any, child_id: str = "c", where: Any = WHERE) -> Handle:
    return Handle(session, SimpleNamespace(name="kid"), where, child_id, "tool")  # type: ignore[arg-type]


def _table(**bounds: int) -> tuple[TaskHandles, list[Handle]]:
    released: list[Handle] = []
    return TaskHandles(released.append, **bounds), released


def _held(table: TaskHandles, session: Any, child_id: str, now: float = 0.0) -> Handle:
    table.make_room(session, now)
    handle = _handle(session, child_id)
    table.hold(handle)
    return handle


def test_a_handle_is_its_sessions_alone() -> None:
    table, _ = _table()
    mine, other = object(), object()
    handle = _held(table, mine, "c1")
    assert len(handle.front_id) == 32 and handle.front_id != "c1"
    assert table.mine(mine, handle.front_id, 0) is handle
    assert table.mine(other, handle.front_id, 0) is None  # another session's: unknown to it
    assert table.mine(mine, "c1", 0) is None  # the child's own id names nothing
    assert table.of_child(WHERE.inflight, "c1") is handle
    assert table.of_child(object(), "c1") is None  # the same id on another connection
    assert table.of_child(WHERE.inflight, 1) is None


def test_what_the_child_says_is_kept_under_our_id() -> None:
    table, released = _table()
    handle = _held(table, object(), "c1")
    seen = table.saw(handle, {"taskId": "c1", "status": "working", "_meta": {"x": 1}}, 0)
    assert seen == {"taskId": handle.front_id, "status": "working"}
    assert handle.task == seen and not handle.ended and released == []
    table.saw(handle, {"taskId": "c1", "status": "completed"}, 5)
    assert handle.ended and released == [handle]
    table.saw(handle, {"taskId": "c1", "status": "failed"}, 6)  # ended once, let go once
    assert released == [handle]


def test_a_session_holds_so_many_that_have_not_ended() -> None:
    table, released = _table(per_session=2)
    session = object()
    first, second = _held(table, session, "a"), _held(table, session, "b")
    with pytest.raises(McpError) as refused:
        table.make_room(session, 0)
    assert refused.value.code == INVALID_REQUEST and "holds 2" in refused.value.message
    _held(table, object(), "c")  # another session's room is its own
    table.end(first, 1)
    third = _held(table, session, "d", 2)  # the oldest that ended made room
    assert table.mine(session, first.front_id, 2) is None
    assert {h.child_id for h in table.of_session(session, 2)} == {"b", "d"}
    assert released == [first] and second.open and third.open


def test_the_gateway_holds_so_many_in_all() -> None:
    table, _ = _table(total=2)
    a, _b = _held(table, object(), "a"), _held(table, object(), "b")
    with pytest.raises(McpError, match="too many tasks in the gateway"):
        table.make_room(object(), 0)
    table.end(a, 0)
    _held(table, object(), "c")
    assert len(table) == 2 and a.front_id not in table.by_id


def test_a_handle_goes_at_its_ttl_or_a_while_after_its_end() -> None:
    table, released = _table()
    session = object()
    short = _held(table, session, "a")
    table.saw(short, {"status": "working", "ttl": 1000}, 10)
    assert short.expires == 11
    long = _held(table, session, "b")
    table.saw(long, {"status": "working", "ttl": MAX_TTL_MS}, 10)
    table.end(long, 20)  # ended: kept KEEP_ENDED_SECONDS more, the ttl's end if sooner
    assert long.expires == 20 + KEEP_ENDED_SECONDS
    table.sweep(10.5)
    assert len(table) == 2
    table.sweep(11)  # its ttl is over: dropped while running, and let go
    assert table.mine(session, short.front_id, 11) is None and released == [long, short]
    assert table.mine(session, long.front_id, 20 + KEEP_ENDED_SECONDS - 1) is long
    assert table.mine(session, long.front_id, 20 + KEEP_ENDED_SECONDS) is None
    bad = _held(table, session, "c")
    table.saw(bad, {"status": "working", "ttl": -1}, 0)  # not a ttl: kept while its session lasts
    assert bad.expires is None


def test_a_lost_task_fails_and_a_closed_session_hands_back_what_runs() -> None:
    table, released = _table()
    session = object()
    lost, ended, running = (_held(table, session, c) for c in ("a", "b", "c"))
    table.end(lost, 0, "the server 'kid' stopped; the task is lost")
    assert lost.task["status"] == "failed" and "stopped" in lost.task["statusMessage"]
    table.end(ended, 0)
    assert table.session_ended(session) == [running]  # to be cancelled at its child
    assert len(table) == 0 and table.of_child(WHERE.inflight, "c") is None
    assert released == [lost, ended, running]  # each let go once
