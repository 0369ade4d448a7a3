"""OpenTelemetry: one trace from an HTTP client through the gateway to a child. The
gateway runs in this process with the SDK's in-memory exporter; the child is a real
subprocess that reports the `_meta.traceparent` its call arrived with."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from aiohttp.test_utils import TestServer
from codex_mcp.gateway.config.load import read_config
from codex_mcp.gateway.serve import build_core
from codex_mcp.observe import tracing
from codex_mcp.observe.enable import Observed
from codex_mcp.transports.http import HttpConfig
from codex_mcp.transports.http.app import create_app
from http_helpers import call, open_session, text_of
from observe_helpers import ROOT

pytest.importorskip("opentelemetry.sdk")
from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.sdk.trace.export.in_memory_span_exporter import (
    InMemorySpanExporter,
)
from opentelemetry.trace import SpanKind

CLIENT_TRACE = "4bf92f3577b34da6a3ce929d0e0e4736"
CLIENT_SPAN = "00f067aa0ba902b7"


def _config(tmp_path: Path) -> Path:
    child = str(Path(__file__).resolve().parent / "servers/trace_child.py")
    kid = {"command": sys.executable, "args": [str(ROOT / "cmd/mcp"), "--serve", child]}
    path = tmp_path / ".mcp.json"
    path.write_text(json.dumps({"mcpServers": {"kid": kid}}))
    return path


def _ids(traceparent: str) -> tuple[str, str]:
    version, trace_id, span_id, _flags = traceparent.split("-")
    assert version == "00"
    return trace_id, span_id


def _hex(number: int, digits: int) -> str:
    return f"{number:0{digits}x}"


def _one(spans: list[ReadableSpan], name: str) -> ReadableSpan:
    (found,) = [span for span in spans if span.name == name]
    return found


async def _call_seen_trace(
    url: str, http: aiohttp.ClientSession, session: dict[str, str], request_id: int, **extra: Any
) -> str:
    message = call(request_id, "kid__seen_trace", {})
    if "meta" in extra:
        message["params"]["_meta"] = extra["meta"]
    async with http.post(url, json=message, headers={**session, **extra.get("headers", {})}) as r:
        return text_of(await r.json())


async def test_one_trace_from_the_http_client_through_the_gateway_to_the_child(
    tmp_path: Path, exported: InMemorySpanExporter
) -> None:
    core = build_core(read_config(_config(tmp_path)))
    app = create_app(core, HttpConfig(host="127.0.0.1", port=0))
    async with TestServer(app, host="127.0.0.1") as server, aiohttp.ClientSession() as http:
        url = str(server.make_url("/mcp"))
        session = await open_session(http, url)

        # 1. The trace context in the HTTP request's traceparent header.
        header = {"traceparent": f"00-{CLIENT_TRACE}-{CLIENT_SPAN}-01"}
        seen = await _call_seen_trace(url, http, session, 10, headers=header)
        trace_id, parent_id = _ids(seen)
        assert trace_id == CLIENT_TRACE  # the child is in the client's trace
        spans = exported.get_finished_spans()
        served = _one(spans, "tools/call kid__seen_trace")
        relayed = _one(spans, "relay kid")
        assert served.kind is SpanKind.SERVER and relayed.kind is SpanKind.CLIENT
        assert _hex(served.context.trace_id, 32) == CLIENT_TRACE
        assert served.parent is not None and _hex(served.parent.span_id, 16) == CLIENT_SPAN
        assert relayed.parent is not None and relayed.parent.span_id == served.context.span_id
        assert _hex(relayed.context.span_id, 16) == parent_id  # the child's parent: the relay
        assert served.attributes is not None
        assert served.attributes["mcp.method.name"] == "tools/call"
        assert served.attributes["gen_ai.tool.name"] == "kid__seen_trace"
        assert served.attributes["mcp.outcome"] == "ok"
        assert len(str(served.attributes["mcp.session.id"])) == 8

        # 2. The trace context in the request's params._meta (no header).
        exported.clear()
        other_trace = "0af7651916cd43dd8448eb211c80319c"
        meta = {"traceparent": f"00-{other_trace}-b7ad6b7169203331-01"}
        seen = await _call_seen_trace(url, http, session, 11, meta=meta)
        assert _ids(seen)[0] == other_trace
        served = _one(exported.get_finished_spans(), "tools/call kid__seen_trace")
        assert served.parent is not None and _hex(served.parent.span_id, 16) == "b7ad6b7169203331"

        # 3. No trace context: a new trace of the gateway's own, still passed on.
        exported.clear()
        seen = await _call_seen_trace(url, http, session, 12)
        served = _one(exported.get_finished_spans(), "tools/call kid__seen_trace")
        assert served.parent is None
        assert _ids(seen)[0] == _hex(served.context.trace_id, 32)
    await core.aclose()


async def test_nothing_is_traced_without_an_endpoint_or_provider(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in tracing.ENDPOINT_ENVS:
        monkeypatch.delenv(name, raising=False)
    assert not tracing.requested() and tracing.tracer() is None
    core = build_core(read_config(_config(tmp_path)))
    create_app(core, HttpConfig(host="127.0.0.1", port=0))
    observed = core.extension(Observed)
    assert observed is not None
    assert observed.tracing is None
    assert all(type(sink).__name__ != "TracingSink" for sink in observed.recorder.sinks)
    await core.aclose()
