"""The Prometheus metrics, declared once; imported at the first scrape (or under
`--workers`), never by a server that nobody scrapes (specs/observability.md, "Metrics"; decision 42)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any, NamedTuple

from prometheus_client import (
    CONTENT_TYPE_LATEST,
    REGISTRY,
    CollectorRegistry,
    Counter,
    Gauge,
    Histogram,
    generate_latest,
)
from prometheus_client.registry import Collector

from . import call_metrics, plain_metrics
from .plain_metrics import BUCKETS, MAX_LABELS, OTHER, Declared, Labels
from .workers import MULTIPROC_ENV

__all__ = ["BUCKETS", "MAX_LABELS", "OTHER", "Labels", "exposition", "shared"]


SSE_STREAMS = Gauge("codex_mcp_sse_streams", "SSE streams open now.", multiprocess_mode="livesum")
SSE_EVENTS_QUEUED = Gauge(
    "codex_mcp_sse_events_queued",
    "Events waiting in open SSE streams for their client.",
    multiprocess_mode="livesum",
)
SSE_EVENTS_DROPPED = Counter(
    "codex_mcp_sse_events_dropped",
    "Progress and log notifications dropped for SSE readers that lagged past "
    "--send-buffer-bytes (--slow-client drop).",
)
SSE_BYTES_DROPPED = Counter(
    "codex_mcp_sse_dropped_bytes", "The bytes of those dropped notifications."
)
SSE_STREAMS_CLOSED_SLOW = Counter(
    "codex_mcp_sse_streams_closed_slow",
    "SSE streams ended because their reader lagged past --send-buffer-bytes "
    "(--slow-client close); the client resumes them with Last-Event-ID.",
)
CHILDREN = Gauge(
    "codex_mcp_gateway_children",
    "Gateway child servers, by state.",
    ["state"],
    multiprocess_mode="livesum",
)
CHILD_RESTARTS = Gauge(
    "codex_mcp_gateway_child_restarts",
    "Restarts of each gateway child server so far.",
    ["child"],
    multiprocess_mode="livesum",
)
APP_SERVERS = Gauge(
    "codex_mcp_codex_app_servers",
    "Codex app-servers running (one per session that called a codex tool).",
    multiprocess_mode="livesum",
)


class RedisSeries(NamedTuple):
    available: Gauge
    round_trips: Histogram


_REDIS: list[RedisSeries] = []


def redis_series() -> RedisSeries:
    """The Redis series, made the first time a server that has Redis (`--redis-url`) sets
    them: a server without one exports none, so an alert on availability 0 fires only
    where Redis is used."""
    if not _REDIS:
        available = Gauge(
            "codex_mcp_redis_available",
            "1 while the shared session store (Redis) answers, 0 while it does not.",
            multiprocess_mode="livemin",
        )
        round_trips = Histogram(
            "codex_mcp_redis_round_trip_seconds",
            "Round trips to Redis: a ping per scrape (and, under --workers, every few seconds).",
            buckets=BUCKETS,
        )
        _REDIS.append(RedisSeries(available, round_trips))
    return _REDIS[0]


_SHARED: dict[str, Any] = {}


def shared(declared: Declared) -> Any:
    """`declared` as prometheus_client's own metric (under --workers: written to this
    worker's file on every change), made once."""
    metric = _SHARED.get(declared.name)
    if metric is None:
        name, documentation, labels, kind = declared
        if kind == "counter":
            metric = Counter(name, documentation, labels)
        else:
            metric = Gauge(name, documentation, labels, multiprocess_mode="livesum")
        _SHARED[declared.name] = metric
    return metric


class _PlainNumbers(Collector):
    """This process's plain counts (one process: no --workers), for the registry."""

    def collect(self) -> Iterator[Any]:
        yield from plain_metrics.collect()
        calls = call_metrics.local_calls()
        if calls is not None:
            yield from calls.collect()


class WorkerCalls(Collector):
    """Every worker's request metrics (under --workers), from their files."""

    def __init__(self, directory: str) -> None:
        self.directory = directory

    def collect(self) -> Iterator[Any]:
        yield from call_metrics.summed(self.directory).collect(in_flight=False)


if not os.environ.get(MULTIPROC_ENV):
    REGISTRY.register(_PlainNumbers())


def exposition() -> tuple[bytes, str]:
    """The text every scrape gets: all workers' metrics under --workers, ours otherwise."""
    if os.environ.get(MULTIPROC_ENV):
        from prometheus_client import multiprocess

        call_metrics.flush()  # this worker's latest; the others' are at most FLUSH_SECONDS old
        registry = CollectorRegistry()
        multiprocess.MultiProcessCollector(registry)  # type: ignore[no-untyped-call]
        registry.register(WorkerCalls(os.environ[MULTIPROC_ENV]))
        return generate_latest(registry), CONTENT_TYPE_LATEST
    return generate_latest(REGISTRY), CONTENT_TYPE_LATEST
