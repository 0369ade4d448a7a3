"""A Codex turn is a span of its own under the request's span (OpenTelemetry's in-memory
exporter), and the app-server it ran on is counted in /metrics; over HTTP with the real
Codex CLI against the fake model."""

from __future__ import annotations

from pathlib import Path

import aiohttp
import pytest
from codex_mcp.codex.provider import CodexProvider
from codex_mcp.core.server import ServerCore
from codex_mcp.transports.http import HttpConfig, create_app
from interop import fake_responses_provider as fake
from interop.fake_responses_provider import FakeProvider

from .conftest import codex_env, needs_codex
from .raw_http import open_session

pytestmark = [pytest.mark.interop, needs_codex]
pytest.importorskip("opentelemetry.sdk")
from opentelemetry.sdk.trace.export.in_memory_span_exporter import (  # noqa: E402
    InMemorySpanExporter,
)

TRACE = "5bf92f3577b34da6a3ce929d0e0e4736"


def parse(text: str) -> dict[str, float]:
    from prometheus_client.parser import text_string_to_metric_families

    return {
        sample.name: sample.value
        for family in text_string_to_metric_families(text)
        for sample in family.samples
        if not sample.labels
    }


async def test_a_codex_turn_is_a_child_span_of_its_call(
    aiohttp_server: object,
    codex_home: Path,
    workdir: Path,
    fake_model: tuple[FakeProvider, int],
    exported: InMemorySpanExporter,
) -> None:
    fake_model[0].responder = fake.echo_prompt()
    provider = CodexProvider(env=codex_env(codex_home), driver_options={"cwd": str(workdir)})
    core = ServerCore(provider, name="codex-mcp-server", version="test")
    server = await aiohttp_server(create_app(core, HttpConfig()), host="127.0.0.1")  # type: ignore[operator]
    url = str(server.make_url("/mcp"))
    async with aiohttp.ClientSession() as http:
        session = await open_session(http, url)
        message = {
            "jsonrpc": "2.0",
            "id": 7,
            "method": "tools/call",
            "params": {
                "name": "codex",
                "arguments": {"prompt": "traced"},
                "_meta": {"traceparent": f"00-{TRACE}-1111111111111111-01"},
            },
        }
        headers = {**session, "Accept": "application/json, text/event-stream"}
        async with http.post(url, json=message, headers=headers) as response:
            assert response.status == 200
            await response.read()
        async with http.get(str(server.make_url("/metrics"))) as scraped:
            metrics = parse(await scraped.text())
        assert metrics["codex_mcp_codex_app_servers"] == 1  # the session's app-server
    spans = exported.get_finished_spans()
    (served,) = [s for s in spans if s.name == "tools/call codex"]
    (turn,) = [s for s in spans if s.name == "codex turn"]
    assert f"{served.context.trace_id:032x}" == TRACE
    assert turn.parent is not None and turn.parent.span_id == served.context.span_id
    assert turn.attributes is not None and turn.attributes["codex.tool"] == "codex"
    assert str(turn.attributes["codex.thread_id"])
    await core.aclose()
