"""The Prometheus metrics, declared once.

Counters and histograms are bumped where things happen (dispatch.py, refusals.py, web.py;
the per-request ones, hot-path figures, live in call_metrics.py);
gauges of state that lives elsewhere (gateway children, Codex app-servers, Redis) are set
from a snapshot (state.py) when scraped. Under `--workers` the supervisor gives every
worker one PROMETHEUS_MULTIPROC_DIR, so any worker's /metrics shows them all (counters and
histograms summed, gauges summed over live workers).

Label values are bounded: methods and tools beyond `MAX_LABELS` distinct values count as
"other", so a client inventing names cannot grow the series without end.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any, Final

from prometheus_client import (
    CONTENT_TYPE_LATEST,
    REGISTRY,
    CollectorRegistry,
    Counter,
    Gauge,
    Histogram,
    generate_latest,
    values,
)

from .workers import MULTIPROC_ENV


class _ThisProcess:
    """This process's id, read once and again only after a fork. prometheus_client's
    multiprocess values (one file per process, under --workers) ask for it on every
    update, to notice a fork: with the default, os.getpid, that is a system call per
    update, five per request."""

    def __init__(self) -> None:
        self.pid = os.getpid()
        os.register_at_fork(after_in_child=self._forked)

    def _forked(self) -> None:
        self.pid = os.getpid()

    def __call__(self) -> int:
        return self.pid


if os.environ.get(MULTIPROC_ENV):  # before any metric below is made: they take this class
    values.ValueClass = values.MultiProcessValue(_ThisProcess())  # type: ignore[no-untyped-call]

MAX_LABELS: Final = 200
OTHER: Final = "other"
#: Seconds: from a ping's tens of microseconds to a Codex turn's minutes.
BUCKETS: Final = (0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300)  # fmt: skip

SESSIONS_LIVE = Gauge(
    "codex_mcp_sessions_live",
    "Sessions open now, by era (session: initialize; stateless: 2026-07-28 and throwaway).",
    ["era"],
    multiprocess_mode="livesum",
)
SESSIONS_CREATED = Counter("codex_mcp_sessions_created", "Sessions opened, by era.", ["era"])
SESSIONS_ENDED = Counter(
    "codex_mcp_sessions_ended",
    "Sessions ended, by era and reason (expired, deleted, shutdown, closed).",
    ["era", "reason"],
)
REFUSED = Counter("codex_mcp_http_refused", "HTTP requests refused, by status code.", ["status"])
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
REDIS_UP = Gauge(
    "codex_mcp_redis_available",
    "1 while the shared session store (Redis) answers, 0 while it does not.",
    multiprocess_mode="livemin",
)
REDIS_SECONDS = Histogram(
    "codex_mcp_redis_round_trip_seconds",
    "Round trips to Redis: a ping per scrape (and, under --workers, every few seconds).",
    buckets=BUCKETS,
)


class Labels:
    """Children of a labelled metric, made once per label value and kept (no per-call
    dict, no lock for the lookup), with values past `MAX_LABELS` folded into "other"."""

    def __init__(self, make: Callable[..., Any]) -> None:
        self._make = make
        self._children: dict[Any, Any] = {}

    def get(self, *values: str) -> Any:
        child = self._children.get(values)
        if child is None:
            if len(self._children) >= MAX_LABELS:
                values = tuple(OTHER for _ in values)
                child = self._children.get(values)
            if child is None:
                child = self._make(*values)
                self._children[values] = child
        return child


def exposition() -> tuple[bytes, str]:
    """The text every scrape gets: all workers' metrics under --workers, ours otherwise."""
    if os.environ.get(MULTIPROC_ENV):
        from prometheus_client import multiprocess

        from .call_metrics import flush

        flush()  # this worker's latest; the others' are at most FLUSH_SECONDS old
        registry = CollectorRegistry()
        multiprocess.MultiProcessCollector(registry)  # type: ignore[no-untyped-call]
        return generate_latest(registry), CONTENT_TYPE_LATEST
    return generate_latest(REGISTRY), CONTENT_TYPE_LATEST
