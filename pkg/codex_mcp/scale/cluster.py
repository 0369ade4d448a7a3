"""The core's seams for replicas sharing a Redis store: provider events, the requestState
replay cache, tasks (specs/scale.md, "What is shared, and what is not")."""

from __future__ import annotations

import logging
from typing import Any

import orjson

from ..core.jsonrpc import JsonObject, notification
from ..core.log_names import task_label
from ..core.rounds import checked_answer
from ..core.server import ServerCore
from ..core.tasks import TaskRecord
from .records import key_of
from .redis_store import BUS, RedisStore

log = logging.getLogger("codex_mcp.scale")


class Cluster:
    def __init__(self, core: ServerCore, store: RedisStore, session_ttl: float) -> None:
        self.core = core
        self.store = store
        self.session_ttl = session_ttl

    def attach(self) -> None:
        core = self.core
        core.relay = self.relay
        core.shared_nonces = self.claim_nonce
        core.tasks.remote = self
        core.tasks.add_listener(self._task_changed)
        self.store.add_node_listener(self._on_message)

    def detach(self) -> None:
        core = self.core
        core.relay = None
        core.shared_nonces = None
        core.tasks.remote = None

    # -- provider events ---------------------------------------------------------------------
    def relay(self, kind: str, uri: str | None) -> None:
        self.core.deliver_to_listeners(kind, uri)
        self.store.publish(BUS, {"t": "prov", "k": kind, "u": uri, "o": self.store.node})
        self.store.spawn(self._to_sessions(kind, uri))

    async def _to_sessions(self, kind: str, uri: str | None) -> None:
        if kind == "resource_updated":
            if uri is None:
                return
            targets = await self.store.subscribers(uri)
            message = notification("notifications/resources/updated", {"uri": uri})
        else:
            targets = await self.store.live_sessions(self.session_ttl)
            message = notification(f"notifications/{kind}/list_changed")
        data = orjson.dumps(message)
        for session_id in targets:
            self.store.append(session_id, "0", 0, data, False)

    # -- requestState ----------------------------------------------------------------------
    async def claim_nonce(self, nonce: str, expires_at: float) -> bool:
        issued_at = expires_at - self.core.request_state_ttl
        return await self.store.claim_nonce(nonce, expires_at, issued_at)

    # -- tasks (core.tasks.RemoteTasks) -------------------------------------------------------
    def _mirror(self, record: TaskRecord) -> None:
        body = orjson.dumps({"p": record.principal, "n": self.store.node, "d": record.detailed()})
        # Readable at least as long as the task itself (ttlMs after it ends).
        self.store.set_later(key_of("t", record.id), body, record.ttl_ms * 2 + 60_000)

    async def save(self, record: TaskRecord) -> None:
        self._mirror(record)
        await self.store.written("tasks")  # before its handle goes out

    def _task_changed(self, record: TaskRecord) -> None:
        self._mirror(record)
        self.store.publish(
            BUS, {"t": "task", "i": record.id, "d": record.detailed(), "o": self.store.node}
        )

    async def _mirrored(self, task_id: str) -> dict[str, Any] | None:
        raw = await self.store._call(self.store.redis.get(key_of("t", task_id)))
        return None if raw is None else dict(orjson.loads(raw))

    async def get(self, task_id: str, principal: str | None) -> JsonObject | None:
        mirrored = await self._mirrored(task_id)
        if mirrored is None or mirrored.get("p") != principal:
            return None
        detailed: JsonObject = mirrored["d"]
        return detailed

    def update(self, task_id: str, responses: JsonObject) -> None:
        self.store.spawn(self._to_owner(task_id, {"t": "tupd", "i": task_id, "r": responses}))

    def cancel(self, task_id: str) -> None:
        self.store.spawn(self._to_owner(task_id, {"t": "tcancel", "i": task_id}))

    async def _to_owner(self, task_id: str, message: JsonObject) -> None:
        mirrored = await self._mirrored(task_id)
        if mirrored is not None:
            self.store.publish(key_of("node", str(mirrored["n"])), message)

    # -- what other replicas say ------------------------------------------------------------
    def _on_message(self, message: JsonObject) -> None:
        kind = message.get("t")
        if kind == "prov":
            self.core.deliver_to_listeners(str(message["k"]), message.get("u"))
        elif kind == "task":
            detailed = message["d"]
            self.core.subscriptions.task_changed(str(message["i"]), lambda: detailed)
        elif kind in ("tupd", "tcancel"):
            record = self.core.tasks.held(str(message["i"]))
            if record is None:
                return
            if kind == "tcancel":
                record.cancel()
                return
            try:
                record.answer(message["r"], checked_answer)
            except Exception as exc:  # checked on the replica that took the update
                log.debug("task %s: update refused here: %s", task_label(record.id), exc)
