"""The counters and gauges bumped while serving (sessions, refused requests), plain numbers
until scraped, with bounded label values (specs/observability.md, "Metrics": cardinality)."""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterator
from typing import Any, Final, Literal, NamedTuple

from .workers import MULTIPROC_ENV

MAX_LABELS: Final = 200
#: The longest label value kept as it is: MCP's own limit on a tool's name.
MAX_LABEL_CHARS: Final = 128
OTHER: Final = "other"
#: Seconds: from a ping's tens of microseconds to a Codex turn's minutes.
BUCKETS: Final = (0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300)  # fmt: skip


class Declared(NamedTuple):
    """A metric bumped while serving: its name (a counter's without `_total`), help and
    label names. A gauge is summed over the live workers under --workers."""

    name: str
    documentation: str
    labels: tuple[str, ...]
    kind: Literal["counter", "gauge"]


SESSIONS_LIVE: Final = Declared(
    "codex_mcp_sessions_live",
    "Sessions open now, by era (session: initialize; stateless: 2026-07-28 and throwaway).",
    ("era",),
    "gauge",
)
SESSIONS_CREATED: Final = Declared(
    "codex_mcp_sessions_created", "Sessions opened, by era.", ("era",), "counter"
)
SESSIONS_ENDED: Final = Declared(
    "codex_mcp_sessions_ended",
    "Sessions ended, by era and reason (expired, deleted, shutdown, closed).",
    ("era", "reason"),
    "counter",
)
REFUSED: Final = Declared(
    "codex_mcp_http_refused",
    "HTTP requests refused, by status code and reason.",
    ("status", "reason"),
    "counter",
)


class Labels:
    """Children of a labelled metric, made once per label value and kept (no per-call
    dict, no lock for the lookup), with values past `MAX_LABELS` folded into "other"."""

    def __init__(self, make: Callable[..., Any]) -> None:
        self._make = make
        self._children: dict[Any, Any] = {}

    def get(self, *values: str) -> Any:
        return child_of(self._children, values, self._make)


def child_of(children: dict[Any, Any], values: tuple[str, ...], make: Callable[..., Any]) -> Any:
    """The child of these label values, made if new; past `MAX_LABELS` children, or for a
    value longer than `MAX_LABEL_CHARS`, the "other" child."""
    child = children.get(values)
    if child is None:
        if len(children) >= MAX_LABELS or not all(len(v) <= MAX_LABEL_CHARS for v in values):
            values = tuple(OTHER for _ in values)
            child = children.get(values)
        if child is None:
            child = children[values] = make(*values)
    return child


class Value:
    """One label set's number (the event loop's thread is the only writer: no lock)."""

    __slots__ = ("created", "value")

    def __init__(self, *_: str) -> None:
        self.value = 0.0
        self.created = time.time()

    def inc(self, amount: float = 1.0) -> None:
        self.value += amount

    def dec(self, amount: float = 1.0) -> None:
        self.value -= amount


class Family(Labels):
    """A declared metric's values in this process, as the series prometheus_client's
    Counter or Gauge of the same name would give."""

    def __init__(self, declared: Declared) -> None:
        super().__init__(Value)
        self.declared = declared

    def metric(self) -> Any:
        from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily

        name, documentation, labels, kind = self.declared
        children: list[tuple[tuple[str, ...], Value]] = list(self._children.items())
        if kind == "counter":
            counter = CounterMetricFamily(name, documentation, labels=labels)
            for values, child in children:
                counter.add_metric(values, child.value, created=child.created)
            return counter
        gauge = GaugeMetricFamily(name, documentation, labels=labels)
        for values, child in children:
            gauge.add_metric(values, child.value)
        return gauge


_FAMILIES: dict[str, Family] = {}


def family(declared: Declared) -> Labels:
    """The process's one family of `declared` (every observed core shares it, as they
    share prometheus_client's registry): plain numbers, or under --workers the shared
    metric's children."""
    if os.environ.get(MULTIPROC_ENV):
        from .metrics import shared

        return Labels(shared(declared).labels)
    found = _FAMILIES.get(declared.name)
    if found is None:
        found = _FAMILIES[declared.name] = Family(declared)
    return found


def collect() -> Iterator[Any]:
    """The plain families as prometheus_client's metric families (at a scrape)."""
    for each in list(_FAMILIES.values()):
        yield each.metric()
