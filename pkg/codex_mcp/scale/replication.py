"""Which writes wait for a Redis replica (`--redis-wait`), and where their WAIT goes: to
each primary that took them, on the connection that wrote them, while that primary has a
replica (specs/scale.md, "What a failover may lose")."""

from __future__ import annotations

import logging
import math
import time
from collections.abc import Sequence
from typing import Any, Final

from .backends import Backend

#: How long a write that waits for a replica (WAIT) waits before it goes on without one.
WAIT_TIMEOUT_MS: Final = 250
#: The kinds of writes that may wait for a replica.
WAIT_KINDS: Final = frozenset({"sessions", "tasks", "events"})
#: Writes still wait this long (seconds) after their primary last had a replica.
REPLICA_GRACE: Final = 30.0
#: A write no replica acknowledged is logged at most this often (seconds).
UNREPLICATED_EVERY: Final = 10.0

log = logging.getLogger("codex_mcp.scale")


def wait_kinds(wait: str) -> frozenset[str]:
    """`--redis-wait`'s kinds; ValueError for one we do not know."""
    kinds = {k.strip() for k in wait.split(",") if k.strip()} - {"none"}
    if kinds - WAIT_KINDS:
        raise ValueError(
            f"--redis-wait: unknown {', '.join(sorted(kinds - WAIT_KINDS))}; "
            "give any of sessions, tasks, events, or none"
        )
    return frozenset(kinds)


class Replication:
    """What each primary's replicas are, as the heartbeat last asked (ROLE, once a second,
    only when some kind waits), and the WAITs a pipeline ends with."""

    def __init__(self, backend: Backend, kinds: frozenset[str]) -> None:
        self.kinds = kinds
        self._backend = backend
        #: Replicas each primary had at the last heartbeat, and when it last had one.
        self.counts: dict[str, int] = {}
        self._seen: dict[str, float] = {}
        self._said = -math.inf

    def waits(self, kind: str) -> bool:
        return kind in self.kinds

    async def observe(self) -> None:
        if self.kinds:
            self.counts = await self._backend.replica_counts()
            now = time.monotonic()
            self._seen.update((node, now) for node, count in self.counts.items() if count)

    def forget(self) -> None:
        """After an outage: perhaps another primary, judged by its own replicas."""
        self._seen.clear()

    def _replicated(self, node: str) -> bool:
        """Whether a write on `node` waits: while it has a replica, or had one within
        REPLICA_GRACE (a replica cut off may yet be promoted: waited for, up to the
        timeout, rather than written past)."""
        recent = time.monotonic() - self._seen.get(node, -math.inf) < REPLICA_GRACE
        return bool(self.counts.get(node)) or recent

    def wait_on(self, pipe: Any, keys: Sequence[str]) -> int:
        """End `pipe` with a WAIT for each primary it writes `keys` to that has a replica;
        returns how many (its last results are theirs: `held`)."""
        return self._backend.queue_waits(pipe, keys, self._replicated, WAIT_TIMEOUT_MS)

    def held(self, results: list[Any], waited: int, what: str, name: str) -> bool:
        """Whether a replica acknowledged each WAIT among `results`; if not, says so (once
        in a while: a replica down makes every write say so)."""
        held = all(answer >= 1 for answer in results[len(results) - waited :])
        if not held and time.monotonic() - self._said >= UNREPLICATED_EVERY:
            self._said = time.monotonic()
            log.warning(
                "no Redis replica acknowledged %s %s within %d ms: a failover now could lose it",
                what,
                name,
                WAIT_TIMEOUT_MS,
            )
        return held


__all__ = ["WAIT_KINDS", "WAIT_TIMEOUT_MS", "Replication", "wait_kinds"]
