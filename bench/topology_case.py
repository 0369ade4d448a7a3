"""The bench's Redis topologies case: two replicas of codex-mcp-http (16 clients each) on one
Redis, on the primary Sentinel names (a primary, its replica, three sentinels) and on a
three-node Cluster, in the same run: calls/s, a session's first call on another replica,
and Redis commands per call (every data node's INFO commandstats; the sentinels' own
answers apart). The servers are the tests' (tests/scale/topologies.py), started with the
package binaries on loopback ports."""

from __future__ import annotations

import contextlib
import shutil
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from codex_mcp.bench.stats import percentile
from harness import ROOT, medians
from scale_cases import HTTP, Load, Rows, Setup, first_and_cached, measure

sys.path[:0] = [str(ROOT / "tests"), str(ROOT / "tests/scale")]
from scale_setup import RedisServer  # noqa: E402
from topologies import ClusterServer, SentinelGroup  # noqa: E402

LABEL = "Redis topologies"
TWO_REPLICAS = Setup("2 replicas, 16 clients each", [], replicas=2, clients=16)


@contextlib.contextmanager
def _topologies(root: Path, binary: str) -> Iterator[list[tuple[str, str, tuple[str, ...]]]]:
    """(name, --redis-url, the data nodes' URLs) of each topology, all running."""
    one = RedisServer(binary=binary)
    sentinel = SentinelGroup(root / "sentinel", binary)
    cluster = ClusterServer(root / "cluster", binary)
    try:
        yield [
            ("one Redis", one.url, (one.url,)),
            ("Sentinel (primary, replica, 3 sentinels)", sentinel.url, (sentinel.primary.url,)),
            ("Cluster (3 nodes)", cluster.url, tuple(n.url for n in cluster.nodes)),
        ]
    finally:
        for server in (one, sentinel, cluster):
            server.stop()


def topology_case(runs: int, calls: int, cap: float) -> Rows:
    binary = shutil.which("redis-server") or "/usr/bin/redis-server"
    if not Path(binary).exists():
        print("  redis-server not installed: the topology case is skipped", file=sys.stderr)
        return []
    results: dict[str, list[dict[str, Any]]] = {}
    with tempfile.TemporaryDirectory() as root, _topologies(Path(root), binary) as topologies:
        for run in range(runs):
            for name, url, nodes in topologies:  # interleaved: drift hits them alike
                print(f"  {name} (run {run + 1} of {runs}) ...", file=sys.stderr, flush=True)
                load = Load(url, TWO_REPLICAS, calls, cap, nodes)
                figures = measure([*HTTP, "--redis-url", url], {}, load)
                first, cached = first_and_cached(url)
                figures["first_call_elsewhere_ms_p50"] = percentile(first, 0.5) * 1000
                figures["cached_call_ms_p50"] = percentile(cached, 0.5) * 1000
                results.setdefault(name, []).append(figures)
    return [(name, medians(found)) for name, found in results.items()]


def topology_markdown(rows: Rows, generated: str) -> str:
    lines = [
        generated,
        "| 2 replicas, HTTP echo, 16 clients each | p50 | calls/s | server CPU per call "
        "| a session's first call on another replica (p50) | a call on the replica holding "
        "it (p50) | Redis commands per call |",
        "|---|---|---|---|---|---|---|",
    ]
    for name, f in rows:
        cpu = f.get("cpu_us_per_call")
        lines.append(
            f"| {name} | {f['p50_ms']:.2f} ms | {f['throughput_per_s']:,.0f} "
            f"| {'-' if cpu is None else f'{cpu:.0f} µs'} "
            f"| {f['first_call_elsewhere_ms_p50']:.2f} ms | {f['cached_call_ms_p50']:.2f} ms "
            f"| {f.get('redis_cmds_per_call', 0):.3f} |"
        )
    return "\n".join(lines)
