"""The drop policy itself, on the bytes the core writes: answers and requests are kept in
order, the oldest progress and log notifications go first, and a notification already
waiting is kept once. (The flood tests show it over real transports.)"""

from __future__ import annotations

from collections import deque

import orjson
from codex_mcp.core import jsonrpc
from codex_mcp.transports.backpressure import EventQueue, shed


def progress(step: int) -> bytes:
    return orjson.dumps(jsonrpc.notification("notifications/progress", {"progress": step}))


LIST_CHANGED = orjson.dumps(jsonrpc.notification("notifications/tools/list_changed"))
UPDATED = orjson.dumps(jsonrpc.notification("notifications/resources/updated", {"uri": "a"}))


def answer(request_id: int) -> bytes:
    return orjson.dumps({"jsonrpc": "2.0", "id": request_id, "result": {}})


def test_answers_are_kept_in_order_and_the_oldest_progress_goes_first() -> None:
    first = [answer(1), *(progress(n) for n in range(100)), LIST_CHANGED, answer(2)]
    then = [LIST_CHANGED, UPDATED, UPDATED, *(progress(n) for n in range(100, 200)), answer(3)]
    items = deque([*first, *then])
    size = sum(map(len, items))
    freed = shed(items, lambda data: data, size, bound=size)  # down to half of it
    kept = list(items)
    assert [m for m in kept if b'"id"' in m] == [answer(1), answer(2), answer(3)]
    assert kept.count(LIST_CHANGED) == 1 and kept.count(UPDATED) == 1
    steps = [orjson.loads(m)["params"]["progress"] for m in kept if b'progress"' in m]
    assert steps == list(range(steps[0], 200))  # the newest kept, the oldest dropped
    assert sum(map(len, kept)) == size - freed <= size // 2


def test_a_reader_queue_counts_its_bytes_and_sheds_to_half_its_bound() -> None:
    queue: EventQueue[tuple[str, bytes] | None] = EventQueue()
    for n in range(1000):
        queue.put_nowait((f"1_{n}", progress(n)))
    queue.put_nowait((f"1_{1000}", answer(7)))
    before = queue.bytes
    queue.shed(before)
    assert queue.bytes <= before // 2
    left = [queue.get_nowait() for _ in range(queue.qsize())]
    assert left[-1] == ("1_1000", answer(7))
    assert queue.bytes == 0
