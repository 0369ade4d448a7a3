"""Every way a tool is called through the gateway passes the same observation and the same
policy: a plain call, a 2025-11-25 task-augmented call (the gateway relays the child's task
under a handle of its own), a 2026-07-28 call that becomes a task of the gateway's, and a
call the gateway "follows" (a front that makes no tasks calling a task-required tool). Each
leaves one audit line, one count in the call metrics and one span, and each is decided by
the policy (a deny rule refuses it as unknown, with a deny line of the policy's). Before the
core's declared extension points, the task-augmented call replaced the observed `tools/call`
entry and left no trace at all (issue 38).

The child is server-everything (npm), whose `simulate-research-query` runs only as a task."""

from __future__ import annotations

import json
import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
from aiohttp.test_utils import TestServer
from codex_mcp.client import Client, McpError
from codex_mcp.gateway.config.load import read_config
from codex_mcp.gateway.serve import build_core
from codex_mcp.policy.config import parse_policy
from codex_mcp.policy.decide import Policy
from codex_mcp.policy.install import install
from codex_mcp.transports.http import HttpConfig
from codex_mcp.transports.http.app import create_app
from observe_helpers import ROOT, scrape, value

pytest.importorskip("opentelemetry.sdk")
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

EVERYTHING = ROOT / ".tools/npm/node_modules/.bin/mcp-server-everything"
pytestmark = [
    pytest.mark.interop,
    pytest.mark.slow,
    pytest.mark.skipif(not EVERYTHING.exists(), reason="run .ci/node-tools.sh (npm servers)"),
]
RESEARCH = "everything__simulate_research_query"
ECHO = "everything__echo"


@asynccontextmanager
async def _gateway(tmp_path: Path, policy: Any = None) -> AsyncIterator[tuple[str, Path]]:
    """The gateway of server-everything in this process over HTTP, with an audit log; its
    /mcp URL and the log's path."""
    config = tmp_path / ".mcp.json"
    config.write_text(json.dumps({"mcpServers": {"everything": {"command": str(EVERYTHING)}}}))
    core = build_core(read_config(config))
    if policy is not None:
        install(core, Policy(parse_policy(policy, "test")))
    audit = tmp_path / "audit.jsonl"
    app = create_app(core, HttpConfig(host="127.0.0.1", port=0, audit_log=audit))
    try:
        async with TestServer(app, host="127.0.0.1") as server:
            yield str(server.make_url("/mcp")), audit
    finally:
        await core.aclose()


async def _four_calls(url: str) -> dict[str, Any]:
    """The four ways to call a tool through the gateway; what each answered (or raised)."""
    answers: dict[str, Any] = {}

    async def attempt(way: str, call: Any) -> None:
        try:
            answers[way] = await call
        except McpError as error:
            answers[way] = error

    async with Client.http(url, protocol_version="2025-11-25", timeout=30) as front:
        await attempt("plain", front.request("tools/call", {"name": ECHO, "arguments": {"message": "hi"}}))  # fmt: skip
        await attempt("task 2025", front.request("tools/call", {"name": RESEARCH, "arguments": {"topic": "a"}, "task": {}}))  # fmt: skip
    async with Client.http(url, mode="2026-07-28", timeout=30) as front:
        assert front.is_stateless
        await attempt("task 2026", front.call_tool(RESEARCH, {"topic": "b"}, timeout=60))
    async with Client.http(url, protocol_version="2025-06-18", timeout=30) as front:
        await attempt("followed", front.call_tool(RESEARCH, {"topic": "c"}, timeout=60))
    return answers


def _audited(audit: Path) -> list[tuple[str, str | None, str]]:
    lines = [json.loads(line) for line in audit.read_text().splitlines()]
    return [(a["tool"], a["child"], a["outcome"]) for a in lines if a["event"] == "tool_call"]


async def test_every_way_to_call_a_tool_is_audited_counted_and_traced(
    tmp_path: Path, exported: InMemorySpanExporter
) -> None:
    async with _gateway(tmp_path) as (url, audit):
        metrics = url.replace("/mcp", "/metrics")
        before = value(await scrape(metrics), "codex_mcp_requests_total", method="tools/call", tool=RESEARCH)  # fmt: skip
        answers = await _four_calls(url)
        after = value(await scrape(metrics), "codex_mcp_requests_total", method="tools/call", tool=RESEARCH)  # fmt: skip
    assert answers["plain"]["content"][0]["text"].endswith("hi")
    assert answers["task 2025"]["task"]["status"] == "working", answers["task 2025"]
    assert "# Research Report: b" in answers["task 2026"].text
    assert "# Research Report: c" in answers["followed"].text
    assert _audited(audit) == [
        (ECHO, "everything", "ok"),
        (RESEARCH, "everything", "ok"),  # the task-augmented call: answered with its task
        (RESEARCH, "everything", "ok"),
        (RESEARCH, "everything", "ok"),
    ]
    assert after - before == 3
    spans = [span.name for span in exported.get_finished_spans()]
    assert spans.count(f"tools/call {RESEARCH}") == 3, spans
    assert spans.count(f"tools/call {ECHO}") == 1, spans


async def test_every_way_to_call_a_tool_is_decided_by_the_policy(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    policy = {"default": "allow", "rules": [{"effect": "deny", "name": RESEARCH}]}
    caplog.set_level(logging.INFO, "codex_mcp.policy")
    async with _gateway(tmp_path, policy) as (url, audit):
        answers = await _four_calls(url)
    assert "hi" in answers["plain"]["content"][0]["text"]
    for way in ("task 2025", "task 2026", "followed"):
        refused = answers[way]
        assert isinstance(refused, McpError), (way, refused)
        assert refused.message == f"Unknown tool: {RESEARCH}", (way, refused)
    denied = [r.getMessage() for r in caplog.records if r.getMessage().startswith("policy deny")]
    called = [line for line in denied if f"action=call tool={RESEARCH} " in line]
    assert len(called) == 3, denied
    assert [line[0] for line in _audited(audit)] == [ECHO, RESEARCH, RESEARCH, RESEARCH]
