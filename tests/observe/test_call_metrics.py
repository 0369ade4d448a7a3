"""The metrics bumped while serving are, in one process, plain numbers read at scrape time
(call_metrics.py: per request; plain_metrics.py: sessions, refused requests): the series
they give must be what prometheus_client's own Counter, Gauge and Histogram would give for
the same observations, edges of the buckets included."""

from __future__ import annotations

import json
from pathlib import Path

from codex_mcp.observe.call_metrics import ERRORS, LABELS, REQUESTS, SECONDS, LocalCalls
from codex_mcp.observe.metrics import BUCKETS, MAX_LABELS, WorkerCalls
from codex_mcp.observe.plain_metrics import (
    REFUSED,
    SESSIONS_ENDED,
    SESSIONS_LIVE,
    Declared,
    Family,
)
from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest
from prometheus_client.parser import text_string_to_metric_families


def samples(registry: CollectorRegistry) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    text = generate_latest(registry).decode()
    return {
        (s.name, tuple(sorted(s.labels.items()))): s.value
        for family in text_string_to_metric_families(text)
        for s in family.samples
        if not s.name.endswith("_created")
    }


def test_local_series_match_prometheus_clients_own() -> None:
    ours = CollectorRegistry()
    local = LocalCalls()
    ours.register(local)
    theirs = CollectorRegistry()
    requests = Counter(*REQUESTS, LABELS, registry=theirs)
    errors = Counter(*ERRORS, LABELS, registry=theirs)
    seconds = Histogram(*SECONDS, LABELS, buckets=BUCKETS, registry=theirs)
    # Every bound itself (le is inclusive), just past it, zero, and past the last bound.
    observations = [0.0, *BUCKETS, *(b * 1.001 for b in BUCKETS), 1e4]
    for index, value in enumerate(observations):
        labels = ("tools/call", "echo") if index % 2 else ("tools/list", "")
        failed = index % 3 == 0
        local.series(*labels).observe(value, failed)
        requests.labels(*labels).inc()
        seconds.labels(*labels).observe(value)
        if failed:
            errors.labels(*labels).inc()
    got, want = samples(ours), samples(theirs)
    got.pop(("codex_mcp_requests_in_flight", ()))
    assert got == want


class _Families:
    def __init__(self, *families: Family) -> None:
        self.families = families

    def collect(self) -> object:
        return (each.metric() for each in self.families)


def test_plain_families_match_prometheus_clients_own() -> None:
    declared: tuple[Declared, ...] = (SESSIONS_LIVE, SESSIONS_ENDED, REFUSED)
    ours = CollectorRegistry()
    families = [Family(each) for each in declared]
    ours.register(_Families(*families))  # type: ignore[arg-type]
    theirs = CollectorRegistry()
    live = Gauge(*SESSIONS_LIVE[:3], registry=theirs)
    ended = Counter(*SESSIONS_ENDED[:3], registry=theirs)
    refused = Counter(*REFUSED[:3], registry=theirs)
    mine_live, mine_ended, mine_refused = families
    for era in ("session", "stateless"):
        for _ in range(3):
            live.labels(era).inc()
            mine_live.get(era).inc()
        live.labels(era).dec()
        mine_live.get(era).dec()
        ended.labels(era, "expired").inc()
        mine_ended.get(era, "expired").inc()
    refused.labels("401", "no_credential").inc(2)
    mine_refused.get("401", "no_credential").inc(2)
    for status in range(MAX_LABELS + 3):  # past the bound: "other"
        mine_refused.get(str(status), "busy").inc()
        shown = (str(status), "busy") if status < MAX_LABELS - 1 else ("other", "other")
        refused.labels(*shown).inc()
    assert samples(ours) == samples(theirs)
    created = {
        s.name
        for f in text_string_to_metric_families(generate_latest(ours).decode())
        for s in f.samples
    }
    assert "codex_mcp_http_refused_created" in created  # a counter's creation time, as theirs


def test_label_values_past_the_bound_fold_into_other() -> None:
    local = LocalCalls()
    for index in range(MAX_LABELS + 5):
        local.series("tools/call", f"tool{index}").observe(0.001, False)
    assert len(local.by_label) == MAX_LABELS + 1
    assert local.by_label[("other", "other")].count == 5


async def test_calls_answered_at_once_and_later_are_counted_alike() -> None:
    """The metrics-only path (no Call made for an answer ready at once) and the path of
    calls that run on give the same series: requests, errors, and calls in flight."""
    import asyncio

    from codex_mcp import Server
    from codex_mcp.client import Client
    from codex_mcp.observe.call_metrics import calls
    from codex_mcp.observe.enable import observe

    server = Server("counted")
    release = asyncio.Event()
    started = asyncio.Event()

    @server.tool
    def quick(message: str) -> str:
        return message

    @server.tool
    async def slow() -> str:
        started.set()
        await release.wait()
        return "done"

    @server.tool
    def broken() -> str:
        raise ValueError("no")

    observed = observe(server.core, metrics=True)
    assert observed is not None and observed.recorder is not None
    assert observed.recorder.counting is not None  # the fast path is the one under test
    local = calls()
    assert isinstance(local, LocalCalls)
    before = {key: (s.count, s.errors) for key, s in local.by_label.items()}

    def gained(tool: str) -> tuple[int, int]:
        count, errors = before.get(("tools/call", tool), (0, 0))
        series = local.by_label[("tools/call", tool)]
        return series.count - count, series.errors - errors

    async with Client.memory(server) as client:
        for _ in range(3):
            assert (await client.call_tool("quick", {"message": "hi"})).text == "hi"
        assert (await client.call_tool("broken", {})).is_error
        running = asyncio.create_task(client.call_tool("slow", {}))
        await started.wait()
        assert local.in_flight == 1
        release.set()
        assert (await running).text == "done"
        assert local.in_flight == 0
    assert gained("quick") == (3, 0)
    assert gained("broken") == (1, 1)
    assert gained("slow") == (1, 0)


def test_a_scrape_under_workers_skips_a_file_that_is_not_a_workers(tmp_path: Path) -> None:
    """Under --workers a scrape sums the workers' files (call_metrics.summed); a file that
    is not JSON, has foreign buckets or the wrong shape is skipped whole, never half-added,
    and the other workers' requests still count."""
    good = [["tools/call", "echo", 3, 1, 0.5, [3] + [0] * len(BUCKETS)]]
    (tmp_path / "calls_1.json").write_text(json.dumps({"requests": good, "children": []}))
    (tmp_path / "calls_2.json").write_text(json.dumps({"requests": good, "children": []}))
    (tmp_path / "calls_3.json").write_text("{not json")
    short = [[*good[0][:5], [3]], *good]  # a good row after a bad one: neither is added
    (tmp_path / "calls_4.json").write_text(json.dumps({"requests": short, "children": []}))
    (tmp_path / "calls_5.json").write_text(json.dumps({"requests": good, "children": [1]}))
    (tmp_path / "calls_6.json").write_text(json.dumps([]))
    registry = CollectorRegistry()
    registry.register(WorkerCalls(str(tmp_path)))
    found = samples(registry)
    echo = (("method", "tools/call"), ("tool", "echo"))
    assert found[("codex_mcp_requests_total", echo)] == 6
    assert found[("codex_mcp_request_errors_total", echo)] == 2
    assert found[("codex_mcp_request_duration_seconds_sum", echo)] == 1.0
    assert "_created" not in generate_latest(registry).decode()  # as multiprocess mode
