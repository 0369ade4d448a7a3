"""The task store's bookkeeping is constant-time: making a task never scans the others
(it did: 20,000 held tasks slowed creation tenfold), and expiry drops finished tasks
oldest first."""

from __future__ import annotations

import asyncio

import pytest
from codex_mcp.core.jsonrpc import JsonObject
from codex_mcp.core.tasks import TaskRecord, TaskStore


async def finished_tasks(store: TaskStore, count: int) -> list[TaskRecord]:
    async def work() -> JsonObject:
        return {"content": []}

    records = []
    for _ in range(count):
        record = store.create("caller")
        record.runner = asyncio.create_task(work())
        record.runner.add_done_callback(record.finished)
        records.append(record)
    await asyncio.gather(*(r.runner for r in records if r.runner is not None))
    await asyncio.sleep(0)  # the done-callbacks
    return records


async def test_making_a_task_does_not_look_at_the_others(monkeypatch: pytest.MonkeyPatch) -> None:
    store = TaskStore(max_tasks=100_000, max_per_principal=100_000)
    await finished_tasks(store, 3_000)
    assert store.active == 0 and len(store) == 3_000
    looked = 0
    expired = TaskRecord.expired

    def counted(self: TaskRecord, now: float) -> bool:
        nonlocal looked
        looked += 1
        return expired(self, now)

    monkeypatch.setattr(TaskRecord, "expired", counted)
    for _ in range(1_000):
        store.create("caller")
    assert looked <= 1_000  # one look at the oldest finished task per create, at most
    assert store.active == 1_000


async def test_finished_tasks_expire_oldest_first_and_make_room() -> None:
    store = TaskStore(ttl_ms=0, max_tasks=10, max_per_principal=10)
    first, *_ = await finished_tasks(store, 10)
    await asyncio.sleep(0.01)  # past a ttl of 0 ms
    store.create("caller")
    assert store.find(first.id, "caller") is None and len(store) == 1
    kept = TaskStore(max_tasks=3, max_per_principal=3)
    oldest, *rest = await finished_tasks(kept, 3)
    kept.create("caller")  # full: the oldest finished task makes room
    assert kept.find(oldest.id, "caller") is None
    assert all(kept.find(r.id, "caller") is r for r in rest)
