"""What a Redis failover loses of what it acknowledged, per kind of write, measured: the
store (codex_mcp.scale.redis_store) writes new sessions, stream events, task mirrors and
requestState claims as fast as it is answered, on the primary Sentinel names (a primary,
its replica, three sentinels, on loopback); the primary is SIGKILLed mid-load; once the
replica is promoted, every write that was acknowledged is looked for on it. Two ways to
die: with the replica in sync, and with the replica cut off (paused, its link to the
primary closed) for 300 ms before, as a network fault would. Each trial starts a fresh
group; `--redis-wait` as given (default and none) side by side.

    .venv/bin/python bench/failover_loss.py [--trials 5] [--readme]
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
from support.polling import until  # noqa: E402
from topologies import SentinelGroup  # noqa: E402

KINDS = ("sessions", "events", "tasks", "requestState claims")


@dataclass
class Tally:
    acked: dict[str, list[str]] = field(default_factory=lambda: {k: [] for k in KINDS})
    refused: int = 0


class Handlers:
    """The store's cluster handlers: nothing to do here."""

    def __getattr__(self, name: str) -> Any:
        return lambda *args: None


async def _writes(store: RedisStore, tally: Tally, stop: asyncio.Event) -> None:
    """Every kind, in turn, as fast as the store answers; a refused write is tried again."""
    numbers = itertools.count()
    stream = "loss-events"
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


async def trial(binary: str, wait: str, cut_off: bool, root: Path) -> dict[str, Any]:
    group = SentinelGroup(root, binary)
    store = RedisStore(group.url, replay_events=1_000_000, session_ttl=600, wait=wait)
    tally, stop = Tally(), asyncio.Event()
    try:
        await store.start(Handlers())  # type: ignore[arg-type]
        await asyncio.wait_for(store.connected(), 30)
        await until(lambda: store.replicas or wait == "none", 30, "the replica seen")
        await asyncio.sleep(1.1)  # past the epoch's first second: claims are accepted
        writer = asyncio.ensure_future(_writes(store, tally, stop))
        await until(lambda: len(tally.acked["sessions"]) >= 300, 30)
        primary, replica = group.current(), group.replica.process
        assert replica is not None
        if cut_off:
            os.kill(replica.pid, signal.SIGSTOP)
            primary.cli("client", "kill", "type", "replica")
            await asyncio.sleep(CUT_OFF)  # the writes go on, acknowledged by the primary
        primary.kill()
        if cut_off:
            os.kill(replica.pid, signal.SIGCONT)
        killed = time.monotonic()
        await until(lambda: group.primary_port() == group.replica.port, 60)
        promoted = time.monotonic() - killed
        before = len(tally.acked["sessions"])
        await until(lambda: len(tally.acked["sessions"]) >= before + 100, 30)
        stop.set()
        await writer
        lost = await _lost(store, tally)
        replayed = await _replays_accepted(store, lost["requestState claims"])
    finally:
        await store.close()
        group.stop()
    return {
        "promoted_s": promoted,
        "acked": {k: len(v) for k, v in tally.acked.items()},
        "lost": {k: len(v) for k, v in lost.items()},
        "replays_accepted": replayed,
    }


async def _lost(store: RedisStore, tally: Tally) -> dict[str, list[str]]:
    redis = store.redis
    lost: dict[str, list[str]] = {}
    pipe = redis.pipeline(transaction=False)
    for sid in tally.acked["sessions"]:
        pipe.exists(store.keys.session("s", sid))
    lost["sessions"] = [
        s for s, e in zip(tally.acked["sessions"], await pipe.execute(), strict=True) if not e
    ]
    stored = {
        item[b"d"].decode()
        for _, item in await redis.xrange(store.keys.session("e", "loss-events"))
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


def table(results: dict[tuple[str, str], list[dict[str, Any]]], trials: int) -> str:
    lines = [
        f"| the replica | --redis-wait | kind of write | acknowledged ({trials} failovers) "
        "| lost | lost per failover (max) |",
        "|---|---|---|---|---|---|",
    ]
    for (way, wait), runs in results.items():
        for kind in KINDS:
            acked = sum(r["acked"][kind] for r in runs)
            lost = [r["lost"][kind] for r in runs]
            lines.append(f"| {way} | {wait} | {kind} | {acked:,} | {sum(lost)} | {max(lost)} |")
    replays = sum(r["replays_accepted"] for runs in results.values() for r in runs)
    promoted = sorted(r["promoted_s"] for runs in results.values() for r in runs)
    lines.append("")
    lines.append(
        f"Lost claims replayed and accepted: {replays}. Promotion after the SIGKILL: "
        f"{promoted[0]:.1f} to {promoted[-1]:.1f} s."
    )
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--trials", type=int, default=5)
    parser.add_argument("--readme", action="store_true", help="write specs/scale.md's table")
    options = parser.parse_args()
    binary = shutil.which("redis-server") or "/usr/bin/redis-server"
    results: dict[tuple[str, str], list[dict[str, Any]]] = {}
    ways = {"in sync": False, f"cut off {CUT_OFF * 1000:.0f} ms before": True}
    with tempfile.TemporaryDirectory() as root:
        for index in range(options.trials):
            for (way, cut_off), wait in itertools.product(ways.items(), ("sessions,tasks", "none")):
                print(f"  trial {index + 1}, {way}, --redis-wait {wait} ...", file=sys.stderr)
                here = Path(root) / f"{cut_off}-{wait}-{index}"
                found = asyncio.run(trial(binary, wait, cut_off, here))
                print(f"    {found}", file=sys.stderr)
                results.setdefault((way, wait), []).append(found)
    text = table(results, options.trials)
    print(text)
    if options.readme:
        write_block(ROOT / "specs/scale.md", "scale-failover-loss", text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
