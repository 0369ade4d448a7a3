"""The per-request metrics, plain numbers on the hot path until a scrape hands them to
prometheus_client (specs/observability.md, "Metrics": hot path; decision 55)."""

from __future__ import annotations

import asyncio
import atexit
import json
import os
import time
from bisect import bisect_left
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Final

from .plain_metrics import BUCKETS, child_of
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
#: Under --workers, each worker's request metrics are in `calls_<pid>.json`.
FILE_PREFIX: Final = "calls_"
#: Under --workers, how often a worker writes its request metrics to the shared files.
FLUSH_SECONDS: Final = 0.25
_BOUNDS: list[str] = []


def _bounds() -> list[str]:
    """Each bucket's `le` label, as prometheus_client writes it (read at a scrape)."""
    if not _BOUNDS:
        from prometheus_client.utils import floatToGoString

        _BOUNDS.extend(floatToGoString(b) for b in (*BUCKETS, float("inf")))  # type: ignore[no-untyped-call]
    return _BOUNDS


class Series:
    """One label set's requests: how many, how many failed, their latency histogram."""

    __slots__ = ("buckets", "count", "created", "errors", "sum")

    def __init__(self, *_: str) -> None:
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

    @classmethod
    def of(cls, count: Any, errors: Any, seconds: Any, buckets: Any) -> Series:
        """A series as a worker's file has it (ValueError or TypeError: not ours)."""
        series = cls()
        series.count, series.errors, series.sum = int(count), int(errors), float(seconds)
        series.buckets = [int(each) for each in buckets]
        if len(series.buckets) != len(BUCKETS) + 1:
            raise ValueError("not our buckets")
        return series

    def add(self, other: Series) -> None:
        """Another worker's numbers of the same series."""
        self.count += other.count
        self.errors += other.errors
        self.sum += other.sum
        self.buckets = [mine + theirs for mine, theirs in zip(self.buckets, other.buckets, strict=True)]  # fmt: skip

    def cumulative(self) -> list[tuple[str, float]]:
        total = 0
        out: list[tuple[str, float]] = []
        for bound, count in zip(_bounds(), self.buckets, strict=True):
            total += count
            out.append((bound, total))
        return out


class LocalCalls:
    """This process's request metrics, as plain numbers (one process: no --workers),
    collected by metrics.py at a scrape."""

    #: Numbers summed from the workers' files (no `_created`: see `collect`).
    summed = False

    def __init__(self) -> None:
        self.in_flight = 0
        self.by_label: dict[tuple[str, str], Series] = {}
        self.by_child: dict[str, Series] = {}

    def started(self) -> None:
        self.in_flight += 1

    def ended(self) -> None:
        self.in_flight -= 1

    def answered(
        self, method: str, tool: str, seconds: float, failed: bool, child: str | None = None
    ) -> None:
        """A request begun with `started` answered: `ended` and `counted`."""
        self.in_flight -= 1
        self.counted(method, tool, seconds, failed, child)

    def counted(
        self, method: str, tool: str, seconds: float, failed: bool, child: str | None = None
    ) -> None:
        """A request answered: `series(...).observe` and the child's, in one call (the hot
        path's: a call each was a third of the metrics' cost). A request answered at once,
        in the call that brought it, comes here alone: nothing that reads the calls in
        flight (a scrape, the status page, a flush) runs between its start and its end."""
        series = self.by_label.get((method, tool)) or self.series(method, tool)
        series.count += 1
        series.sum += seconds
        series.buckets[bisect_left(BUCKETS, seconds)] += 1
        if failed:
            series.errors += 1
        if child is not None:
            self.child(child).observe(seconds, failed)

    def series(self, method: str, tool: str) -> Series:
        return child_of(self.by_label, (method, tool), Series)  # type: ignore[no-any-return]

    def child(self, name: str) -> Series:
        found = self.by_child.get(name)
        if found is None:
            found = self.by_child[name] = Series()
        return found

    def collect(self, *, in_flight: bool = True) -> Iterator[Any]:
        """The series prometheus_client's Counter, Histogram and Gauge would give; with
        `_created` in one process, without under --workers (as its multiprocess mode)."""
        from prometheus_client.core import (
            CounterMetricFamily,
            GaugeMetricFamily,
            HistogramMetricFamily,
        )

        requests = CounterMetricFamily(*REQUESTS, labels=LABELS)
        errors = CounterMetricFamily(*ERRORS, labels=LABELS)
        seconds = HistogramMetricFamily(*SECONDS, labels=LABELS)
        for (method, tool), series in list(self.by_label.items()):
            labels = [method, tool]
            created = None if self.summed else series.created
            requests.add_metric(labels, series.count, created=created)
            errors.add_metric(labels, series.errors, created=created)
            seconds.add_metric(labels, series.cumulative(), series.sum)
        children = HistogramMetricFamily(*CHILD_SECONDS, labels=["child"])
        for name, series in list(self.by_child.items()):
            children.add_metric([name], series.cumulative(), series.sum)
        yield requests
        yield errors
        yield seconds
        if in_flight:
            yield GaugeMetricFamily(*IN_FLIGHT, value=self.in_flight)
        yield children


class SharedCalls(LocalCalls):
    """The request metrics under --workers: counted as plain numbers like one process's,
    and written whole to this worker's file in the shared directory (`calls_<pid>.json`,
    a temporary file renamed over it) at most every FLUSH_SECONDS, when this worker is
    scraped and at exit, not on every request. A scrape sums every worker's file
    (WorkerFiles) and shows another worker's requests within FLUSH_SECONDS. The calls in
    flight are prometheus_client's own gauge, summed over the live workers."""

    def __init__(self, directory: str) -> None:
        super().__init__()
        from prometheus_client import Gauge

        self.directory = Path(directory)
        self._in_flight = Gauge(*IN_FLIGHT, multiprocess_mode="livesum")
        #: The requests counted when last written (nothing new: nothing to write).
        self._written = -1
        self._due: asyncio.TimerHandle | None = None
        atexit.register(self.flush)
        # A forked child writes its own file: it starts from none of its parent's numbers.
        os.register_at_fork(after_in_child=self._forked)

    def _forked(self) -> None:
        self.by_label.clear()
        self.by_child.clear()
        self.in_flight = 0
        self._written = -1
        self._due = None

    def started(self) -> None:
        self.in_flight += 1
        if self._due is None:
            self._schedule()

    def ended(self) -> None:
        self.in_flight -= 1
        if self._due is None:  # a call longer than FLUSH_SECONDS: its end is written too
            self._schedule()

    def counted(
        self, method: str, tool: str, seconds: float, failed: bool, child: str | None = None
    ) -> None:
        super().counted(method, tool, seconds, failed, child)
        if self._due is None:
            self._schedule()

    def _schedule(self) -> None:
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:  # no loop in this thread: written at the next scrape or exit
            return
        self._due = loop.call_later(FLUSH_SECONDS, self.flush)

    def flush(self) -> None:
        """Write this worker's numbers, if any changed since the last flush."""
        if self._due is not None:
            self._due.cancel()
            self._due = None
        self._in_flight.set(self.in_flight)
        answered = sum(series.count for series in self.by_label.values())
        if answered == self._written:
            return
        self._written = answered
        snapshot = {
            "requests": [
                [method, tool, s.count, s.errors, s.sum, s.buckets]
                for (method, tool), s in list(self.by_label.items())
            ],
            "children": [[name, s.sum, s.buckets] for name, s in list(self.by_child.items())],
        }
        target = self.directory / f"{FILE_PREFIX}{os.getpid()}.json"
        temporary = target.with_suffix(".tmp")
        temporary.write_text(json.dumps(snapshot))
        temporary.replace(target)


def summed(directory: str) -> LocalCalls:
    """Every worker's request metrics, summed from their files in the shared directory
    (a dead worker's requests still count, as prometheus_client's multiprocess counters
    do); collected with `in_flight=False` (the live workers' gauge gives that)."""
    total = LocalCalls()
    total.summed = True
    for path in sorted(Path(directory).glob(f"{FILE_PREFIX}*.json")):
        try:
            snapshot = json.loads(path.read_text())
            requests = [
                ((str(method), str(tool)), Series.of(count, errors, seconds, buckets))
                for method, tool, count, errors, seconds, buckets in snapshot["requests"]
            ]
            children = [
                (str(name), Series.of(sum(buckets), 0, seconds, buckets))
                for name, seconds, buckets in snapshot["children"]
            ]
        except (OSError, ValueError, TypeError, KeyError):
            continue  # gone since listed, or not one of ours: the others still count
        for key, series in requests:
            total.series(*key).add(series)
        for name, series in children:
            total.child(name).add(series)
    return total


_CALLS: LocalCalls | SharedCalls | None = None


def flush() -> None:
    """Under --workers, write this worker's request metrics now (before a scrape reads
    every worker's files)."""
    if isinstance(_CALLS, SharedCalls):
        _CALLS.flush()


def calls() -> LocalCalls | SharedCalls:
    """The process's request metrics (made on first use), in the mode
    `metrics.exposition` reads: multiprocess when PROMETHEUS_MULTIPROC_DIR is set."""
    global _CALLS
    if _CALLS is None:
        directory = os.environ.get(MULTIPROC_ENV)
        _CALLS = SharedCalls(directory) if directory else LocalCalls()
    return _CALLS


def local_calls() -> LocalCalls | None:
    """The process's request metrics when they are plain numbers only (no --workers)."""
    return None if isinstance(_CALLS, SharedCalls) else _CALLS
