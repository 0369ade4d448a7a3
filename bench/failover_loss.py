"""What a Redis failover loses of what it acknowledged, per kind of write, measured: the
store (codex_mcp.scale.redis_store) writes new sessions, stream events, task mirrors and
requestState claims as fast as it is answered, on the primary Sentinel names (a primary,
its replica, three sentinels) and on a Cluster (three primaries, a replica each), on
loopback; a primary is SIGKILLed mid-load (in the Cluster, the one holding the
requestState nonces and the event stream); once its replica is promoted, every write that
was acknowledged is looked for. Two ways to die: with the replica in sync, and with the
replica cut off (paused, its link to the primary closed) for 300 ms before, as a network
fault would. Each trial starts a fresh topology; `--redis-wait` as given (default and
none) side by side.

    .venv/bin/python bench/failover_loss.py [--trials 5] [--topologies sentinel,cluster] [--readme]
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import os
import shutil
import signal
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from codex_mcp.scale.records import key_of
from codex_mcp.scale.redis_store import RedisStore
from codex_mcp.transports.http.errors import StoreUnavailable
from codex_mcp.transports.http.store import SessionRecord
from harness import ROOT, write_block

sys.path[:0] = [str(ROOT / "tests"), str(ROOT / "tests/scale")]
from scale_setup import RedisServer  # noqa: E402
from support.polling import until  # noqa: E402
from topologies import ClusterServer, SentinelGroup  # noqa: E402

KINDS = ("sessions", "events", "tasks", "requestState claims")


@dataclass
class Tally:
    acked: dict[str, list[str]] = field(default_factory=lambda: {k: [] for k in KINDS})
    refused: int = 0


class Handlers:
    """The store's cluster handlers: nothing to do here."""

    def __getattr__(self, name: str) -> Any:
        return lambda *args: None


async def _writes(store: RedisStore, tally: Tally, stop: asyncio.Event, stream: str) -> None:
    """Every kind, in turn, as fast as the store answers; a refused write is tried again."""
    numbers = itertools.count()
    while not stop.is_set():
        n = next(numbers)
        try:
            sid = f"loss-{n}"
            await store.save(sid, SessionRecord(initialized=True), 600, [], announce=False)
            tally.acked["sessions"].append(sid)
            store.append(stream, "0", 0, str(n).encode(), False)
            task = f"task-{n}"
            store.set_later(key_of("t", task), b"{}", 600_000)
            await store.written("tasks")  # the event before it is stored too
            tally.acked["events"].append(str(n))
            tally.acked["tasks"].append(task)
            nonce = f"nonce-{n}"
            if await store.claim_nonce(nonce, time.time() + 600, time.time()):
                tally.acked["requestState claims"].append(nonce)
        except StoreUnavailable:
            tally.refused += 1
            await asyncio.sleep(0.02)
        except Exception as exc:  # an epoch refusal of a state issued this very second
            if "issued before" not in str(exc):
                raise
            await asyncio.sleep(0.02)


#: How long the replica is cut off before the primary dies, in the second way.
CUT_OFF = 0.3


class Sentinel:
    """A primary, its replica, three sentinels: the victim is the primary."""

    def __init__(self, binary: str, root: Path) -> None:
        self.group = SentinelGroup(root, binary)
        self.url = self.group.url

    def victim(self, store: RedisStore) -> tuple[RedisServer, RedisServer]:
        return self.group.current(), self.group.replica

    def promoted(self, replica: RedisServer) -> bool:
        return self.group.primary_port() == replica.port

    def stop(self) -> None:
        self.group.stop()


class Cluster:
    """Three primaries, a replica each: the victim is the primary of the nonces' slot."""

    def __init__(self, binary: str, root: Path) -> None:
        self.cluster = ClusterServer(root, binary, replicas=1)
        self.url = self.cluster.url

    def victim(self, store: RedisStore) -> tuple[RedisServer, RedisServer]:
        name = store.redis.get_node_from_key(store.keys.epoch).name
        primary = next(n for n in self.cluster.nodes if f"127.0.0.1:{n.port}" == name)
        link = f"master_port:{primary.port}\n"
        replica = next(n for n in self.cluster.nodes if link in n.cli("info", "replication"))
        return primary, replica

    def promoted(self, replica: RedisServer) -> bool:
        return "role:master" in replica.cli("info", "replication") and (
            "cluster_state:ok" in replica.cli("cluster", "info")
        )

    def stop(self) -> None:
        self.cluster.stop()


TOPOLOGIES = {"sentinel": Sentinel, "cluster": Cluster}


def stream_on(store: RedisStore, key: str) -> str:
    """A stream (a session id) whose events live on the node holding `key` (a Cluster's:
    the one that dies; one Redis's: any)."""
    if not store.keys.tagged:
        return "loss-events"
    node = store.redis.get_node_from_key(key).name
    names = (f"loss-events-{n}" for n in itertools.count())
    return next(
        n for n in names if store.redis.get_node_from_key(store.keys.session("e", n)).name == node
    )


async def trial(kind: str, binary: str, wait: str, cut_off: bool, root: Path) -> dict[str, Any]:
    topology = TOPOLOGIES[kind](binary, root)
    store = RedisStore(topology.url, replay_events=1_000_000, session_ttl=600, wait=wait)
    tally, stop = Tally(), asyncio.Event()
    try:
        await store.start(Handlers())  # type: ignore[arg-type]
        await asyncio.wait_for(store.connected(), 30)
        replication = store.replication
        await until(lambda: wait == "none" or all(replication.counts.values()), 30)
        await asyncio.sleep(1.1)  # past the epoch's first second: claims are accepted
        stream = stream_on(store, store.keys.epoch)
        writer = asyncio.ensure_future(_writes(store, tally, stop, stream))
        await until(lambda: len(tally.acked["sessions"]) >= 300, 30)
        primary, replica = topology.victim(store)
        assert replica.process is not None
        if cut_off:
            os.kill(replica.process.pid, signal.SIGSTOP)
            primary.cli("client", "kill", "type", "replica")
            await asyncio.sleep(CUT_OFF)  # the writes go on, acknowledged by the primary
        primary.kill()
        if cut_off:
            os.kill(replica.process.pid, signal.SIGCONT)
        killed = time.monotonic()
        await until(lambda: topology.promoted(replica), 60)
        promoted = time.monotonic() - killed
        before = len(tally.acked["sessions"])
        await until(lambda: len(tally.acked["sessions"]) >= before + 100, 60)
        stop.set()
        await writer
        lost = await _lost(store, tally, stream)
        replayed = await _replays_accepted(store, lost["requestState claims"])
    finally:
        await store.close()
        topology.stop()
    return {
        "promoted_s": promoted,
        "acked": {k: len(v) for k, v in tally.acked.items()},
        "lost": {k: len(v) for k, v in lost.items()},
        "replays_accepted": replayed,
    }


async def _lost(store: RedisStore, tally: Tally, stream: str) -> dict[str, list[str]]:
    redis = store.redis
    lost: dict[str, list[str]] = {}
    pipe = redis.pipeline(transaction=False)
    for sid in tally.acked["sessions"]:
        pipe.exists(store.keys.session("s", sid))
    lost["sessions"] = [
        s for s, e in zip(tally.acked["sessions"], await pipe.execute(), strict=True) if not e
    ]
    stored = {
        item[b"d"].decode() for _, item in await redis.xrange(store.keys.session("e", stream))
    }
    lost["events"] = [n for n in tally.acked["events"] if n not in stored]
    pipe = redis.pipeline(transaction=False)
    for task in tally.acked["tasks"]:
        pipe.exists(key_of("t", task))
    lost["tasks"] = [
        t for t, e in zip(tally.acked["tasks"], await pipe.execute(), strict=True) if not e
    ]
    pipe = redis.pipeline(transaction=False)
    claims = tally.acked["requestState claims"]
    for nonce in claims:
        pipe.exists(store.keys.nonce(nonce))
    lost["requestState claims"] = [
        n for n, e in zip(claims, await pipe.execute(), strict=True) if not e
    ]
    return lost


async def _replays_accepted(store: RedisStore, nonces: list[str]) -> int:
    """Each claim the failover lost, presented again: how many the store accepted (the
    states were issued before the new primary's epoch, so none should be)."""
    accepted = 0
    for nonce in nonces:
        try:
            issued = time.time() - 5  # before the failover: when the state was issued
            accepted += await store.claim_nonce(nonce, time.time() + 600, issued)
        except Exception as exc:
            if "issued before" not in str(exc):
                raise
    return accepted


def table(results: dict[tuple[str, str, str], list[dict[str, Any]]], trials: int) -> str:
    lines = [
        f"| topology | the replica | --redis-wait | kind of write | acknowledged ({trials} "
        "failovers) | lost | lost per failover (max) |",
        "|---|---|---|---|---|---|---|",
    ]
    for (kind_of, way, wait), runs in results.items():
        for kind in KINDS:
            acked = sum(r["acked"][kind] for r in runs)
            lost = [r["lost"][kind] for r in runs]
            lines.append(
                f"| {kind_of} | {way} | {wait} | {kind} | {acked:,} | {sum(lost)} | {max(lost)} |"
            )
    replays = sum(r["replays_accepted"] for runs in results.values() for r in runs)
    promotions = []
    for topology in dict.fromkeys(kind for kind, _, _ in results):
        took = sorted(
            r["promoted_s"] for k, runs in results.items() if k[0] == topology for r in runs
        )
        promotions.append(f"{topology} {took[0]:.1f} to {took[-1]:.1f} s")
    lines.append("")
    lines.append(
        f"Lost claims replayed and accepted: {replays}. Promotion after the SIGKILL: "
        f"{', '.join(promotions)}."
    )
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--trials", type=int, default=5)
    parser.add_argument("--topologies", default="sentinel,cluster", help="sentinel, cluster")
    parser.add_argument("--readme", action="store_true", help="write specs/scale.md's table")
    options = parser.parse_args()
    binary = shutil.which("redis-server") or "/usr/bin/redis-server"
    results: dict[tuple[str, str, str], list[dict[str, Any]]] = {}
    ways = {"in sync": False, f"cut off {CUT_OFF * 1000:.0f} ms before": True}
    kinds = options.topologies.split(",")
    with tempfile.TemporaryDirectory() as root:
        for index in range(options.trials):
            for kind, (way, cut_off), wait in itertools.product(
                kinds, ways.items(), ("sessions,tasks", "none")
            ):
                print(
                    f"  trial {index + 1}, {kind}, {way}, --redis-wait {wait} ...", file=sys.stderr
                )
                here = Path(root) / f"{kind}-{cut_off}-{wait}-{index}"
                found = asyncio.run(trial(kind, binary, wait, cut_off, here))
                print(f"    {found}", file=sys.stderr)
                results.setdefault((kind, way, wait), []).append(found)
    text = table(results, options.trials)
    print(text)
    if options.readme:
        write_block(ROOT / "specs/scale.md", "scale-failover-loss", text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
