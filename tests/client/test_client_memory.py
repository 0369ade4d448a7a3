"""The client against our own server library, in memory: caching, pagination, retries,
timeouts and cancellation, approval, telemetry, spans, and server-to-client requests."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from codex_mcp import Context, Server
from codex_mcp.client import (
    ApprovalDenied,
    Client,
    McpError,
    MemoryTransport,
    RequestTimeout,
    Telemetry,
    TelemetryEvent,
    exponential_backoff,
)
from codex_mcp.core.jsonrpc import INTERNAL_ERROR, JsonObject
from codex_mcp.core.versions import SUPPORTED_VERSIONS


class RecordingTransport(MemoryTransport):
    """Remembers the method of every message the client sends."""

    def __init__(self, server: Any) -> None:
        super().__init__(server)
        self.sent: list[JsonObject] = []

    async def send(self, message: JsonObject) -> None:
        self.sent.append(message)
        await super().send(message)

    def methods(self) -> list[str]:
        return [m.get("method", "<response>") for m in self.sent]


class Flaky:
    """A tool body failing with `code` for the first `failures` calls."""

    def __init__(self, failures: int, code: int = INTERNAL_ERROR) -> None:
        self.failures, self.code, self.calls = failures, code, 0

    def tool(self) -> Any:
        async def flaky() -> str:
            self.calls += 1
            if self.calls <= self.failures:
                raise McpError(self.code, f"transient failure {self.calls}")
            return f"ok after {self.calls}"

        return flaky


def build_server(page_size: int = 1000) -> tuple[Server, dict[str, Any]]:
    server = Server("memory-test", "9.9.9", page_size=page_size)
    state: dict[str, Any] = {"cancelled": asyncio.Event(), "started": asyncio.Event()}

    @server.tool
    async def echo(message: str) -> str:
        """Echo."""
        return message

    @server.tool
    async def block(ctx: Context) -> str:
        """Wait until cancelled, and record that."""
        state["started"].set()
        try:
            await asyncio.sleep(30)
        except asyncio.CancelledError:
            state["cancelled"].set()
            raise
        return "not cancelled"

    @server.tool
    async def progress(ctx: Context) -> str:
        for i in (1, 2, 3):
            await ctx.report_progress(i, 3)
        await ctx.info("done with progress")
        return "progressed"

    @server.tool
    async def ask(ctx: Context) -> JsonObject:
        sampled = await ctx.sample("hi", max_tokens=5)
        elicited = await ctx.elicit("name?", {"type": "object", "properties": {}})
        roots = await ctx.list_roots()
        return {"sampled": sampled, "elicited": elicited, "roots": roots}

    @server.tool
    async def broken() -> str:
        raise ValueError("this tool always fails")

    for name in ("t1", "t2", "t3"):
        server.add_tool(lambda: "x", name=name, description=f"tool {name}")

    @server.prompt
    def p1() -> str:
        return "one"

    @server.prompt
    def p2() -> str:
        return "two"

    @server.prompt
    def p3() -> str:
        return "three"

    return server, state


@pytest.fixture
async def pair() -> Any:
    server, state = build_server(page_size=2)
    transport = RecordingTransport(server)
    async with Client(transport, server_name="mem") as client:
        yield client, transport, server, state


async def test_handshake_defaults_and_typed_results(pair: Any) -> None:
    client, transport, _server, _ = pair
    first = transport.sent[0]
    assert first["method"] == "initialize"
    assert first["params"] == {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "codex-python", "version": "0.0.0"},
    }
    assert transport.sent[1]["method"] == "notifications/initialized"
    assert client.protocol_version == "2025-06-18"
    assert client.server_info["name"] == "memory-test"
    assert "tools" in client.server_capabilities
    result = await client.call_tool("echo", {"message": "hello"})
    assert result.text == "hello" and not result.is_error


@pytest.mark.parametrize("version", SUPPORTED_VERSIONS)
async def test_negotiates_every_revision_we_serve(version: str) -> None:
    server, _ = build_server()
    async with Client.memory(server, protocol_version=version) as client:
        assert client.protocol_version == version
        assert (await client.call_tool("echo", {"message": version})).text == version


async def test_pagination_is_followed_and_cached(pair: Any) -> None:
    client, transport, _server, _ = pair
    tools = await client.list_tools()
    assert [t.name for t in tools] == [
        "echo",
        "block",
        "progress",
        "ask",
        "broken",
        "t1",
        "t2",
        "t3",
    ]
    assert transport.methods().count("tools/list") == 4  # page size 2
    await client.list_tools()
    assert transport.methods().count("tools/list") == 4  # cached
    await client.list_tools(cache=False)
    assert transport.methods().count("tools/list") == 8


async def test_cursor_pages_for_prompts(pair: Any) -> None:
    client, *_ = pair
    first = await client.list_prompts()
    assert [p.name for p in first] == ["p1", "p2"] and first.next_cursor
    second = await client.list_prompts(first.next_cursor)
    assert [p.name for p in second] == ["p3"] and second.next_cursor is None
    everything = await client.list_prompts(all_pages=True)
    assert [p.name for p in everything] == ["p1", "p2", "p3"]


async def test_list_changed_invalidates_the_cache(pair: Any) -> None:
    client, _transport, server, _ = pair
    assert "late" not in [t.name for t in await client.list_tools()]
    server.add_tool(lambda: "late!", name="late")
    for _ in range(50):  # the notification arrives on a later loop turn
        if client._tool_cache is None:
            break
        await asyncio.sleep(0.01)
    assert "late" in [t.name for t in await client.list_tools()]


async def test_filters_and_qualification(pair: Any) -> None:
    client, *_ = pair
    assert [t.name for t in await client.list_tools(allow=["echo", "t1", "nope"])] == ["echo", "t1"]
    assert "echo" not in [t.name for t in await client.list_tools(deny=["echo"])]
    only_t = await client.list_tools(filter=lambda t: t.name.startswith("t"), deny=["t2"])
    assert [t.name for t in only_t] == ["t1", "t3"]
    qualified = await client.list_tools(qualify=True, allow=["echo"])
    assert qualified[0].qualified_name == "mcp__mem__echo"
    assert qualified[0].to_json()["qualified_name"] == "mcp__mem__echo"


async def test_timeout_cancels_on_the_server(pair: Any) -> None:
    client, transport, server, state = pair
    with pytest.raises(RequestTimeout):
        await client.call_tool("block", timeout=0.2)
    await asyncio.wait_for(state["cancelled"].wait(), 2)
    cancel = [m for m in transport.sent if m.get("method") == "notifications/cancelled"]
    call = [m for m in transport.sent if m.get("method") == "tools/call"][-1]
    assert cancel[0]["params"]["requestId"] == call["id"]
    assert server.core.sessions[0].in_flight == 0


async def test_caller_cancellation_cancels_on_the_server(pair: Any) -> None:
    client, _transport, _server, state = pair
    task = asyncio.create_task(client.call_tool("block"))
    await asyncio.wait_for(state["started"].wait(), 2)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    await asyncio.wait_for(state["cancelled"].wait(), 2)


async def test_retries_counted_and_spaced_by_the_backoff(pair: Any) -> None:
    client, _t, server, _ = pair
    flaky = Flaky(failures=2)
    server.add_tool(flaky.tool(), name="flaky")
    waits: list[int] = []
    result = await client.call_tool("flaky", retries=3, backoff=waits.append)
    assert result.text == "ok after 3"
    assert flaky.calls == 3 and waits == [1, 2]


async def test_retries_exhausted(pair: Any) -> None:
    client, _t, server, _ = pair
    flaky = Flaky(failures=10, code=-32000)
    server.add_tool(flaky.tool(), name="flaky")
    waits: list[int] = []

    async def backoff(attempt: int) -> None:  # an async backoff that waits by itself
        waits.append(attempt)

    with pytest.raises(McpError) as info:
        await client.call_tool("flaky", retries=2, backoff=backoff)
    assert info.value.code == -32000 and flaky.calls == 3 and waits == [1, 2]


@pytest.mark.parametrize("code", [-32601, -32602, -32600])
async def test_non_retryable_errors_are_not_retried(pair: Any, code: int) -> None:
    client, _t, server, _ = pair
    flaky = Flaky(failures=10, code=code)
    server.add_tool(flaky.tool(), name="flaky")
    waits: list[int] = []
    with pytest.raises(McpError):
        await client.call_tool("flaky", backoff=waits.append)
    assert flaky.calls == 1 and waits == []


async def test_error_results_and_timeouts_are_not_retried(pair: Any) -> None:
    client, transport, _s, _ = pair
    waits: list[int] = []
    result = await client.call_tool("broken", backoff=waits.append)
    assert result.is_error and "always fails" in result.text
    with pytest.raises(RequestTimeout):
        await client.call_tool("block", timeout=0.1, backoff=waits.append)
    assert waits == []
    assert [m["params"]["name"] for m in transport.sent if m.get("method") == "tools/call"] == [
        "broken",
        "block",
    ]


async def test_retry_data_flag_wins(pair: Any) -> None:
    client, _t, server, _ = pair
    calls = 0

    async def refuses() -> str:
        nonlocal calls
        calls += 1
        raise McpError(INTERNAL_ERROR, "permanent", {"retryable": False})

    server.add_tool(refuses, name="refuses")
    with pytest.raises(McpError):
        await client.call_tool("refuses", backoff=None)
    assert calls == 1


def test_default_backoff_doubles_to_a_cap() -> None:
    assert [exponential_backoff(n) for n in range(1, 9)] == [
        0.1,
        0.2,
        0.4,
        0.8,
        1.6,
        3.2,
        5.0,
        5.0,
    ]


@pytest.mark.parametrize(
    ("approval", "reason"),
    [
        (lambda tool, args, ctx: False, "denied"),
        (lambda tool, args: "deny", "denied"),
        (lambda tool: ("deny", "unsafe tool"), "unsafe tool"),
    ],
)
async def test_approval_deny(pair: Any, approval: Any, reason: str) -> None:
    client, transport, _s, _ = pair
    events: list[TelemetryEvent] = []
    client.telemetry = Telemetry()
    client.telemetry.subscribe(events.append)
    with pytest.raises(ApprovalDenied) as info:
        await client.call_tool("echo", {"message": "x"}, approval=approval)
    assert info.value.reason == reason and info.value.tool == "echo"
    assert reason in str(info.value)
    assert "tools/call" not in transport.methods()  # the server was never asked
    assert events == []  # like seed 002: approval runs before the start event


async def test_approval_gets_tool_args_and_context(pair: Any) -> None:
    client, *_ = pair
    seen: list[Any] = []

    async def approve(tool: str, args: JsonObject, context: JsonObject) -> bool:
        seen.append((tool, args, context))
        return True

    result = await client.call_tool(
        "echo", {"message": "ok"}, approval=approve, context={"user": "me"}
    )
    assert result.text == "ok"
    assert seen == [("echo", {"message": "ok"}, {"user": "me"})]


async def test_telemetry_events(pair: Any) -> None:
    client, _t, server, _ = pair
    events: list[TelemetryEvent] = []
    client.telemetry = Telemetry()
    unsubscribe = client.telemetry.subscribe(events.append)
    server.add_tool(Flaky(failures=1).tool(), name="flaky")
    await client.call_tool("flaky", backoff=None)
    with pytest.raises(McpError):
        await client.call_tool("nope", {"a": 1})
    names = [e.name for e in events]
    assert names == [
        "codex.mcp.tool_call.start",
        "codex.mcp.tool_call.success",
        "codex.mcp.tool_call.start",
        "codex.mcp.tool_call.failure",
    ]
    start, success, _, failure = events
    assert start.metadata == {"tool": "flaky", "arguments": {}, "server_name": "mem"}
    assert isinstance(start.measurements["system_time"], int)
    assert success.metadata["attempt"] == 2 and success.measurements["duration"] >= 0
    assert failure.metadata["tool"] == "nope" and failure.metadata["arguments"] == {"a": 1}
    assert isinstance(failure.metadata["reason"], McpError) and failure.metadata["attempt"] == 1
    unsubscribe()
    await client.call_tool("echo", {"message": "quiet"})
    assert len(events) == 4


async def test_a_failing_subscriber_does_not_break_the_call(pair: Any) -> None:
    client, *_ = pair
    client.telemetry = Telemetry()

    def bad(_event: TelemetryEvent) -> None:
        raise RuntimeError("subscriber bug")

    client.telemetry.subscribe(bad)
    assert (await client.call_tool("echo", {"message": "fine"})).text == "fine"


async def test_opentelemetry_spans(pair: Any) -> None:
    from opentelemetry import trace
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    exporter = InMemorySpanExporter()
    provider = trace.get_tracer_provider()
    if not isinstance(provider, TracerProvider):
        provider = TracerProvider()
        trace.set_tracer_provider(provider)
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    client, *_ = pair
    await client.call_tool("echo", {"message": "traced"})
    with pytest.raises(McpError):
        await client.call_tool("missing")
    spans = {s.name: s for s in exporter.get_finished_spans()}
    ok, bad = spans["tools/call echo"], spans["tools/call missing"]
    assert ok.kind == trace.SpanKind.CLIENT
    assert ok.attributes["mcp.method.name"] == "tools/call"
    assert ok.attributes["gen_ai.tool.name"] == "echo"
    assert ok.attributes["mcp.server.name"] == "mem"
    assert ok.attributes["mcp.tool_call.attempts"] == 1
    assert bad.status.status_code == trace.StatusCode.ERROR
    assert bad.attributes["error.type"] == "McpError"


async def test_progress_and_logging() -> None:
    server, _ = build_server()
    logs: list[JsonObject] = []
    logged = asyncio.Event()

    def on_log(params: JsonObject) -> None:
        logs.append(params)
        logged.set()

    async with Client.memory(server, logging_handler=on_log) as client:
        progress: list[JsonObject] = []
        result = await client.call_tool("progress", on_progress=progress.append)
        assert result.text == "progressed"
        await asyncio.wait_for(logged.wait(), 5)
    assert [p["progress"] for p in progress] == [1, 2, 3]
    assert progress[0]["total"] == 3
    assert logs and logs[0]["data"] == "done with progress" and logs[0]["level"] == "info"


async def test_server_to_client_requests() -> None:
    server, _ = build_server()
    got: dict[str, Any] = {}

    async def sampling(params: JsonObject) -> JsonObject:
        got["sampling"] = params
        return {"role": "assistant", "content": {"type": "text", "text": "sampled!"}, "model": "m"}

    def elicitation(params: JsonObject) -> JsonObject:
        got["elicitation"] = params
        return {"action": "accept", "content": {"name": "Ada"}}

    roots = [{"uri": "file:///work", "name": "work"}]
    async with Client.memory(
        server, sampling_handler=sampling, elicitation_handler=elicitation, roots=roots
    ) as client:
        assert set(client.capabilities) == {"sampling", "elicitation", "roots"}
        result = await client.call_tool("ask")
    structured = result.structured_content or {}
    assert structured["sampled"]["content"]["text"] == "sampled!"
    assert structured["elicited"] == {"action": "accept", "content": {"name": "Ada"}}
    assert structured["roots"] == roots
    assert got["sampling"]["maxTokens"] == 5
    assert got["elicitation"]["message"] == "name?"


async def test_missing_handler_answers_method_not_found() -> None:
    server, _ = build_server()
    async with Client.memory(server, capabilities={"sampling": {}}) as client:
        # The client answers -32601; our server reports that as the tool's failure.
        result = await client.call_tool("ask")
        assert result.is_error
        assert "Method not found: sampling/createMessage" in result.text


async def test_closed_client_fails_fast() -> None:
    server, state = build_server()
    client = Client.memory(server)
    await client.connect()
    task = asyncio.create_task(client.call_tool("block"))
    await asyncio.wait_for(state["started"].wait(), 2)
    await client.aclose()
    with pytest.raises(Exception, match="closed"):
        await asyncio.wait_for(task, 1)
    with pytest.raises(Exception, match="closed"):
        await client.call_tool("echo", {"message": "late"})
