"""GET /metrics after real calls, read with prometheus_client's parser: over HTTP (one
process, and two workers sharing a port), and for the stdio gateway (--metrics-port)."""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import re
import subprocess
import sys
import threading
import time
from pathlib import Path

import aiohttp
import pytest
from codex_mcp.observe.call_metrics import FLUSH_SECONDS
from http_helpers import call, open_session, text_of
from http_process import HttpProcess
from observe_helpers import ROOT, gateway_config, rpc, scrape, value
from scale_setup import REDIS, SERVING, SHARED, RedisServer

TOKEN = "s3cret-token-for-metrics"
AUTH = {"Authorization": f"Bearer {TOKEN}"}


async def test_http_metrics_count_calls_sessions_and_refusals(tmp_path: Path) -> None:
    audit = tmp_path / "audit.jsonl"
    server = HttpProcess("--bearer-token", TOKEN, "--audit-log", str(audit))
    metrics_url = f"{server.base}/metrics"
    try:
        async with aiohttp.ClientSession() as http:
            session = await open_session(http, server.url, **AUTH)
            for index in range(3):
                async with http.post(
                    server.url,
                    json=call(10 + index, "echo", {"message": f"m{index}"}),
                    headers=session,
                ) as response:
                    assert text_of(await response.json()) == f"m{index}"
            async with http.post(
                server.url, json=call(20, "no_such_tool", {}), headers=session
            ) as r:
                assert "error" in await r.json()
            async with http.get(metrics_url) as refused:
                assert refused.status == 401

            samples = await scrape(metrics_url, AUTH)
            echo = {"method": "tools/call", "tool": "echo"}
            assert value(samples, "codex_mcp_requests_total", **echo) == 3
            assert value(samples, "codex_mcp_request_duration_seconds_count", **echo) == 3
            assert value(samples, "codex_mcp_request_errors_total", **echo) == 0
            # A tool the server does not have is counted as "other" (names are the caller's).
            unknown = {"method": "tools/call", "tool": "other"}
            assert value(samples, "codex_mcp_request_errors_total", **unknown) == 1
            assert value(samples, "codex_mcp_requests_total", method="initialize", tool="") == 1
            assert value(samples, "codex_mcp_requests_in_flight") == 0
            assert value(samples, "codex_mcp_sessions_created_total", era="session") == 1
            assert value(samples, "codex_mcp_sessions_live", era="session") == 1
            refused = {"status": "401", "reason": "no_credential"}
            assert value(samples, "codex_mcp_http_refused_total", **refused) == 1

            async with http.delete(server.url, headers=session) as deleted:
                assert deleted.status in (200, 204)
            samples = await scrape(metrics_url, AUTH)
            assert value(samples, "codex_mcp_sessions_live", era="session") == 0
            ended = value(
                samples, "codex_mcp_sessions_ended_total", era="session", reason="deleted"
            )
            assert ended == 1
        line = server.wait_for_line(r"refused GET /metrics")
        assert "INFO" in line and "from 127.0.0.1: 401 missing bearer token" in line
    finally:
        server.stop()

    lines = [json.loads(line) for line in audit.read_text().splitlines()]
    assert TOKEN not in audit.read_text()
    principal = "sha256:" + hashlib.sha256(TOKEN.encode()).hexdigest()[:16]
    calls = [line for line in lines if line["event"] == "tool_call"]
    assert [(c["tool"], c["outcome"]) for c in calls] == [("echo", "ok")] * 3 + [
        ("no_such_tool", "error")
    ]
    for each in calls:
        assert each["principal"] == principal
        assert re.fullmatch(r"[A-Za-z0-9_-]{8}", each["session"])
        assert each["duration_ms"] >= 0 and "arguments" not in each and "result" not in each
    assert calls[0]["arguments_bytes"] == len(b'{"message":"m0"}')
    assert calls[0]["result_bytes"] > 0
    (refused,) = [line for line in lines if line["event"] == "refused"]
    assert refused["status"] == 401 and refused["path"] == "/metrics"
    assert refused["reason"] == "missing bearer token" and refused["client"] == "127.0.0.1"


async def test_public_metrics_need_no_token_but_mcp_still_does() -> None:
    server = HttpProcess("--bearer-token", TOKEN, "--public-metrics")
    try:
        samples = await scrape(f"{server.base}/metrics")
        assert ("codex_mcp_requests_in_flight", ()) in samples
        async with aiohttp.ClientSession() as http, http.get(f"{server.base}/") as page:
            assert page.status == 401  # the status page is not opened with it
    finally:
        server.stop()


async def test_no_metrics_means_no_route() -> None:
    server = HttpProcess("--no-metrics")
    try:
        async with aiohttp.ClientSession() as http, http.get(f"{server.base}/metrics") as r:
            assert r.status == 404
    finally:
        server.stop()


@pytest.mark.skipif(REDIS is None, reason="redis-server not installed")
async def test_one_scrape_shows_every_worker(tmp_path: Path) -> None:
    redis = RedisServer()
    server = HttpProcess("--workers", "2", "--serve", SHARED, "--redis-url", redis.url)
    try:
        deadline = time.monotonic() + 60  # a loaded machine starts two workers slowly
        while server.stderr.count(SERVING) < 2:  # both serve (not just listen)
            assert time.monotonic() < deadline, f"the workers never served:\n{server.stderr}"
            await asyncio.sleep(0.05)
        served: list[str] = []
        connector = aiohttp.TCPConnector(force_close=True)  # the kernel spreads connections
        async with aiohttp.ClientSession(connector=connector) as http:
            session = await open_session(http, server.url)
            index = 0
            while len(set(served)) < 2 or len(served) < 10:
                index += 1
                assert index < 200, "the calls never reached both workers"
                async with http.post(
                    server.url, json=call(index, "whoami", {}), headers=session
                ) as r:
                    served.append(text_of(await r.json()))
        # A worker writes its requests to the shared files at most FLUSH_SECONDS later
        # (the scraped one at once): a scrape shows both workers' within that.
        whoami = {"method": "tools/call", "tool": "whoami"}
        deadline = time.monotonic() + 30
        while True:
            samples = await scrape(f"{server.base}/metrics")
            if value(samples, "codex_mcp_requests_total", **whoami) == len(served):
                break
            assert time.monotonic() < deadline, "a worker's requests never reached a scrape"
            await asyncio.sleep(FLUSH_SECONDS / 2)
        for _ in range(4):  # whichever worker answers the scrape, it shows both
            samples = await scrape(f"{server.base}/metrics")
            assert value(samples, "codex_mcp_requests_total", **whoami) == len(served)
            assert value(samples, "codex_mcp_request_duration_seconds_count", **whoami) == len(
                served
            )
            assert value(samples, "codex_mcp_redis_round_trip_seconds_count") >= 1
            # Sessions are counted in the shared files too (prometheus_client's own metrics
            # under --workers, plain numbers in one process).
            assert value(samples, "codex_mcp_sessions_created_total", era="session") >= 1
        # Each worker finds Redis up at its next refresh (a few seconds): the least of them.
        for _ in range(300):
            samples = await scrape(f"{server.base}/metrics")
            if value(samples, "codex_mcp_redis_available") == 1:
                break
            await asyncio.sleep(0.05)
        assert value(samples, "codex_mcp_redis_available") == 1
    finally:
        server.stop()
        redis.stop()


# Run in a fresh interpreter (the metrics take their value class when made) with a
# PROMETHEUS_MULTIPROC_DIR, as a worker of --workers does.
_WORKER_UPDATES = """
import os, re, sys
calls = [0]
real_getpid = os.getpid
def counting_getpid():
    calls[0] += 1
    return real_getpid()
os.getpid = counting_getpid  # before prometheus_client is imported: it keeps this one
from codex_mcp.observe import call_metrics, metrics
from codex_mcp.observe.metrics import BUCKETS
from prometheus_client import CollectorRegistry, generate_latest, multiprocess
from prometheus_client.parser import text_string_to_metric_families

def samples(registry):
    return {
        (s.name, tuple(sorted(s.labels.items()))): s.value
        for family in text_string_to_metric_families(generate_latest(registry).decode())
        for s in family.samples
        if s.name.startswith(("codex_mcp_request", "codex_mcp_gateway_child_call"))
        and not s.name.endswith("_created") and "in_flight" not in s.name
    }

def shared():
    registry = CollectorRegistry()
    multiprocess.MultiProcessCollector(registry)
    registry.register(metrics.WorkerCalls(sys.argv[1]))
    return samples(registry)

worker = call_metrics.calls()
reference = call_metrics.LocalCalls()  # one process's plain numbers, checked elsewhere
observations = [0.0, *BUCKETS, *(b * 1.001 for b in BUCKETS), 1e4]
before = calls[0]
for round in range(2):  # two flushes: the second writes only what changed since the first
    for index, value in enumerate(observations[round::2]):
        labels = ("tools/call", "echo") if index % 2 else ("tools/list", "")
        for metrics_of in (worker, reference):
            metrics_of.started()
            metrics_of.series(*labels).observe(value, index % 3 == 0)
            metrics_of.child("up").observe(value, False)
            metrics_of.ended()
    if round == 0:
        print("written per request:", sum(v for k, v in shared().items() if "_count" in k[0]))
        print("getpid per request:", (calls[0] - before) / len(observations))
    worker.flush()
mine = CollectorRegistry()
mine.register(reference)
print("the same series:", shared() == samples(mine))
worker.started()
scraped = metrics.exposition()[0].decode()  # a scrape writes this worker's latest first
print("in flight:", re.findall(r"^codex_mcp_requests_in_flight (.*)$", scraped, re.M))
worker.ended()
child = os.fork()
if child == 0:
    for _ in range(5):
        worker.series("tools/call", "echo").observe(0.001, False)
    sys.exit(0)  # written at exit, to the child's own file
os.waitpid(child, 0)
echo = ("codex_mcp_requests_total", (("method", "tools/call"), ("tool", "echo")))
print("requests after the child:", shared()[echo] - samples(mine)[echo])
print("files:", sorted(os.listdir(sys.argv[1])))
"""


def test_worker_request_metrics_are_written_in_batches(tmp_path: Path) -> None:
    """Under --workers a worker counts requests as plain numbers, as one process does, and
    writes them whole to its own file in the shared directory every FLUSH_SECONDS, when
    scraped and at exit (not five locked file writes and os.getpid() calls per request):
    the series are the same, and a forked child writes its own file."""
    shared = tmp_path / "metrics"
    shared.mkdir()
    done = subprocess.run(
        [sys.executable, "-c", _WORKER_UPDATES, str(shared)],
        env={**os.environ, "PROMETHEUS_MULTIPROC_DIR": str(shared)},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert "written per request: 0" in done.stdout, done.stdout
    assert "getpid per request: 0.0" in done.stdout, done.stdout
    assert "the same series: True" in done.stdout, done.stdout
    assert "in flight: ['1.0']" in done.stdout, done.stdout
    assert "requests after the child: 5.0" in done.stdout, done.stdout
    files = re.search(r"files: (.*)", done.stdout)
    assert files is not None and files[1].count("calls_") == 2, done.stdout


def test_stdio_gateway_serves_metrics_on_a_loopback_port(tmp_path: Path) -> None:
    config = gateway_config(tmp_path)
    audit = ["--audit-log", str(tmp_path / "audit.jsonl"), "--audit-arguments"]
    process = subprocess.Popen(
        [sys.executable, str(ROOT / "cmd/mcp"), "--metrics-port", "0", *audit],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={
            "PATH": "/usr/bin:/bin",
            "CODEX_MCP_WRAPPER_CONFIG": str(config),
            "HOME": str(tmp_path),
        },
    )
    assert process.stdin is not None and process.stdout is not None and process.stderr is not None
    port: list[str] = []
    found = threading.Event()

    def read_stderr() -> None:
        assert process.stderr is not None
        for line in process.stderr:
            hit = re.search(r"metrics on http://127\.0\.0\.1:(\d+)/metrics", line)
            if hit:
                port.append(hit.group(1))
                found.set()

    threading.Thread(target=read_stderr, daemon=True).start()
    try:

        def ask(message: dict[str, object]) -> dict[str, object]:
            assert process.stdin is not None and process.stdout is not None
            process.stdin.write(json.dumps(message) + "\n")
            process.stdin.flush()
            while True:
                answer = json.loads(process.stdout.readline())
                if answer.get("id") == message["id"]:
                    return answer  # type: ignore[no-any-return]

        ask(rpc(1, "initialize", {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}))  # fmt: skip
        listed = ask(rpc(2, "tools/list"))
        assert "up__echo" in json.dumps(listed)
        for index in range(2):
            answer = ask(rpc(3 + index, "tools/call", {"name": "up__echo", "arguments": {"message": "hi"}}))  # fmt: skip
            assert "hi" in json.dumps(answer)
        assert found.wait(30), "the metrics port was never logged"
        samples = asyncio.run(scrape(f"http://127.0.0.1:{port[0]}/metrics"))
        relayed = {"method": "tools/call", "tool": "up__echo"}
        assert value(samples, "codex_mcp_requests_total", **relayed) == 2
        assert (
            value(samples, "codex_mcp_gateway_child_call_duration_seconds_count", child="up") == 2
        )
        assert value(samples, "codex_mcp_gateway_children", state="ready") == 1
        down = sum(
            value(samples, "codex_mcp_gateway_children", state=state)
            for state in ("starting", "restarting", "failed", "not found")
        )
        assert down == 1  # `down` never starts: its command does not exist
        assert value(samples, "codex_mcp_sessions_live", era="session") == 1
    finally:
        process.stdin.close()
        process.wait(30)
    audited = [json.loads(line) for line in (tmp_path / "audit.jsonl").read_text().splitlines()]
    assert [(a["tool"], a["child"], a["outcome"]) for a in audited] == [
        ("up__echo", "up", "ok")
    ] * 2
    assert audited[0]["arguments"] == {"message": "hi"}
    assert audited[0]["result"]["content"][0]["text"] == "hi"
    assert audited[0]["principal"] is None and audited[0]["session"] is None
