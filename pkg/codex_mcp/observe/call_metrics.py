"""The per-request metrics: requests, errors and latency by method and tool, per-child
latency of a gateway's relayed calls, and the calls in flight.

They are bumped on every request, so their cost is the metrics' cost on the hot path. In a
single process they are plain numbers (a few additions per request, no lock: the event
loop's thread is the only writer) that a collector hands to prometheus_client when
scraped, in the same series its Counter, Histogram and Gauge would give. Under `--workers`
(prometheus_client's multiprocess mode) every worker's values must reach the shared files
as they change, so they are prometheus_client's own metrics there.
"""

from __future__ import annotations

import os
import time
from bisect import bisect_left
from collections.abc import Iterator
from typing import Any, Final

from prometheus_client import REGISTRY, Counter, Gauge, Histogram
from prometheus_client.core import (
    CounterMetricFamily,
    GaugeMetricFamily,
    HistogramMetricFamily,
    Metric,
)
from prometheus_client.registry import Collector
from prometheus_client.utils import floatToGoString

from .metrics import BUCKETS, MAX_LABELS, OTHER
from .workers import MULTIPROC_ENV

REQUESTS: Final = ("codex_mcp_requests", "Requests answered, by method and tool.")
ERRORS: Final = (
    "codex_mcp_request_errors",
    "Requests answered with an error (a JSON-RPC error, or a tool result with isError).",
)
SECONDS: Final = (
    "codex_mcp_request_duration_seconds",
    "Time from a request's arrival to its answer, by method and tool.",
)
CHILD_SECONDS: Final = (
    "codex_mcp_gateway_child_call_duration_seconds",
    "Time a tools/call relayed to a child server took, by child.",
)
IN_FLIGHT: Final = ("codex_mcp_requests_in_flight", "Requests being served now.")
LABELS: Final = ("method", "tool")
#: Each bucket's `le` label, as prometheus_client writes it.
_BOUNDS: Final = tuple(floatToGoString(b) for b in (*BUCKETS, float("inf")))  # type: ignore[no-untyped-call]


class Series:
    """One label set's requests: how many, how many failed, their latency histogram."""

    __slots__ = ("buckets", "count", "created", "errors", "sum")

    def __init__(self) -> None:
        self.count = 0
        self.errors = 0
        self.sum = 0.0
        #: Observations per bucket (not cumulative); the last is +Inf's own.
        self.buckets = [0] * (len(BUCKETS) + 1)
        self.created = time.time()

    def observe(self, seconds: float, failed: bool) -> None:
        self.count += 1
        self.sum += seconds
        self.buckets[bisect_left(BUCKETS, seconds)] += 1  # `le` bounds are inclusive
        if failed:
            self.errors += 1

    def cumulative(self) -> list[tuple[str, float]]:
        total = 0
        out: list[tuple[str, float]] = []
        for bound, count in zip(_BOUNDS, self.buckets, strict=True):
            total += count
            out.append((bound, total))
        return out


class LocalCalls(Collector):
    """This process's request metrics, as plain numbers (one process: no --workers)."""

    def __init__(self) -> None:
        self.in_flight = 0
        self.by_label: dict[tuple[str, str], Series] = {}
        self.by_child: dict[str, Series] = {}

    def started(self) -> None:
        self.in_flight += 1

    def ended(self) -> None:
        self.in_flight -= 1

    def series(self, method: str, tool: str) -> Series:
        key = (method, tool)
        found = self.by_label.get(key)
        if found is None:
            if len(self.by_label) >= MAX_LABELS:
                key = (OTHER, OTHER)
                found = self.by_label.get(key)
            if found is None:
                found = self.by_label[key] = Series()
        return found

    def child(self, name: str) -> Series:
        found = self.by_child.get(name)
        if found is None:
            found = self.by_child[name] = Series()
        return found

    def collect(self) -> Iterator[Metric]:
        requests = CounterMetricFamily(*REQUESTS, labels=LABELS)
        errors = CounterMetricFamily(*ERRORS, labels=LABELS)
        seconds = HistogramMetricFamily(*SECONDS, labels=LABELS)
        for (method, tool), series in list(self.by_label.items()):
            labels = [method, tool]
            requests.add_metric(labels, series.count, created=series.created)
            errors.add_metric(labels, series.errors, created=series.created)
            seconds.add_metric(labels, series.cumulative(), series.sum)
        children = HistogramMetricFamily(*CHILD_SECONDS, labels=["child"])
        for name, series in list(self.by_child.items()):
            children.add_metric([name], series.cumulative(), series.sum)
        yield requests
        yield errors
        yield seconds
        yield GaugeMetricFamily(*IN_FLIGHT, value=self.in_flight)
        yield children


class SharedSeries:
    """One label set's requests in prometheus_client's metrics (multiprocess mode)."""

    __slots__ = ("_errors", "_requests", "_seconds")

    def __init__(self, requests: Any, errors: Any, seconds: Any) -> None:
        self._requests = requests
        self._errors = errors
        self._seconds = seconds

    def observe(self, seconds: float, failed: bool) -> None:
        self._requests.inc()
        self._seconds.observe(seconds)
        if failed:
            self._errors.inc()


class SharedCalls:
    """The request metrics in prometheus_client's own metrics, for --workers: each worker
    writes them to the shared directory as they change."""

    def __init__(self) -> None:
        self._requests = Counter(*REQUESTS, LABELS)
        self._errors = Counter(*ERRORS, LABELS)
        self._seconds = Histogram(*SECONDS, LABELS, buckets=BUCKETS)
        self._child_seconds = Histogram(*CHILD_SECONDS, ["child"], buckets=BUCKETS)
        self._in_flight = Gauge(*IN_FLIGHT, multiprocess_mode="livesum")
        self.by_label: dict[tuple[str, str], SharedSeries] = {}
        self.by_child: dict[str, Any] = {}

    def started(self) -> None:
        self._in_flight.inc()

    def ended(self) -> None:
        self._in_flight.dec()

    def series(self, method: str, tool: str) -> SharedSeries:
        key = (method, tool)
        found = self.by_label.get(key)
        if found is None:
            if len(self.by_label) >= MAX_LABELS:
                key = (OTHER, OTHER)
                found = self.by_label.get(key)
            if found is None:
                found = self.by_label[key] = SharedSeries(
                    self._requests.labels(*key),
                    self._errors.labels(*key),
                    self._seconds.labels(*key),
                )
        return found

    def child(self, name: str) -> Any:
        found = self.by_child.get(name)
        if found is None:
            found = self.by_child[name] = _ChildSeries(self._child_seconds.labels(name))
        return found


class _ChildSeries:
    __slots__ = ("_seconds",)

    def __init__(self, seconds: Any) -> None:
        self._seconds = seconds

    def observe(self, seconds: float, failed: bool) -> None:
        self._seconds.observe(seconds)


_CALLS: LocalCalls | SharedCalls | None = None


def calls() -> LocalCalls | SharedCalls:
    """The process's request metrics (made and registered on first use), in the mode
    `metrics.exposition` reads: multiprocess when PROMETHEUS_MULTIPROC_DIR is set."""
    global _CALLS
    if _CALLS is None:
        if os.environ.get(MULTIPROC_ENV):
            _CALLS = SharedCalls()
        else:
            _CALLS = LocalCalls()
            REGISTRY.register(_CALLS)
    return _CALLS
