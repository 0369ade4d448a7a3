"""The core's declared extension points (core/extensions.py): an extension adds what it
declares, composed once; nothing rewrites the method table, a method the core serves is
never silently replaced, the interceptors sit by stage whatever the order of declaration,
and every request of either era (a direct method too) passes the same request wrappers and
the same interceptors."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Hashable, Mapping
from typing import Any

import pytest
from codex_mcp import Server
from codex_mcp.core import McpError, RequestContext, ServerCore
from codex_mcp.core.extensions import CallTool, Extension, Stage
from codex_mcp.core.jsonrpc import JsonObject
from codex_mcp.core.peer import MethodEntry
from codex_mcp.core.ready import Ready

ENVELOPE = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {},
    "io.modelcontextprotocol/clientInfo": {"name": "t", "version": "1"},
}


class Sent(list[Any]):
    def send(self, message: Any, related: Hashable = None) -> None:
        self.append(message)

    def answer(self, request_id: int) -> Any:
        (found,) = [m for m in self if m.get("id") == request_id]
        return found


def _core() -> ServerCore:
    server = Server("ext")

    @server.tool()
    async def echo(text: str) -> str:
        await asyncio.sleep(0)
        return text

    return server.core


def _request(request_id: int, method: str, params: JsonObject | None = None) -> JsonObject:
    return {"jsonrpc": "2.0", "id": request_id, "method": method, "params": params or {}}


def _call(request_id: int, text: str, meta: JsonObject | None = None) -> JsonObject:
    params: JsonObject = {"name": "echo", "arguments": {"text": text}}
    if meta is not None:
        params["_meta"] = meta
    return _request(request_id, "tools/call", params)


class Tagging(Extension):
    """Marks a call's result with its name, around whatever is inside."""

    def __init__(self, tag: str, stage: Stage, log: list[str]) -> None:
        self.tag = tag
        self.stage = stage  # type: ignore[misc]
        self.log = log

    def call_tool(self, call_next: CallTool) -> CallTool:
        async def tagged(name: str, arguments: JsonObject, ctx: RequestContext) -> JsonObject:
            self.log.append(f"{self.tag} {ctx.revision.value} {ctx.method}")
            result = await call_next(name, arguments, ctx)
            text = result["content"][0]["text"]
            return {"content": [{"type": "text", "text": f"{self.tag}({text})"}]}

        return tagged


class Wrapping(Extension):
    """Sees every entry the core dispatches by, once, and every request through them."""

    def __init__(self) -> None:
        self.entries: list[str | None] = []
        self.requests: list[str] = []

    def request(self, method: str | None, entry: MethodEntry) -> MethodEntry:
        self.entries.append(method)
        handler, requests = entry.handler, self.requests

        def seen(peer: Any, params: JsonObject, ctx: Any) -> Any:
            requests.append(method or ctx.method)
            return handler(peer, params, ctx)

        return MethodEntry(seen, entry.inline, entry.context_class)


async def _settle(sent: Sent, count: int) -> None:
    async with asyncio.timeout(5):
        while len([m for m in sent if "id" in m]) < count:
            await asyncio.sleep(0)


async def test_interceptors_sit_by_stage_and_every_era_passes_them() -> None:
    core = _core()
    log: list[str] = []
    core.extend(Tagging("decide", Stage.DECIDE, log))  # declared first, sits outside
    core.extend(Tagging("route", Stage.ROUTE, log))
    wrapping = Wrapping()
    core.extend(wrapping)
    sent = Sent()
    session = core.open_session(sent)
    session.receive(_request(0, "initialize"))
    session.receive(_call(1, "legacy"))
    session.receive(_call(2, "modern", ENVELOPE))
    session.receive(_request(3, "echo", {"text": "direct"}))  # a direct method (fallback)
    await _settle(sent, 4)
    texts = [sent.answer(i)["result"]["content"][0]["text"] for i in (1, 2, 3)]
    assert texts == ["decide(route(legacy))", "decide(route(modern))", "decide(route(direct))"]
    assert log[::2] == [
        "decide legacy tools/call",
        "decide stateless tools/call",
        "decide legacy echo",
    ]
    assert wrapping.requests == ["initialize", "tools/call", "tools/call", "echo"]
    named = [method for method in wrapping.entries if method is not None]
    assert "tools/list" in named and len(named) == len(set(named))  # each entry once
    assert wrapping.entries.count(None) == 2  # the 2026-07-28 dispatch, the direct methods
    await core.aclose()


async def test_what_is_declared_is_composed_once_and_never_rewritten() -> None:
    core = _core()

    class Adds(Extension):
        def methods(self) -> Mapping[str, MethodEntry]:
            return {"tools/list": MethodEntry(lambda *_: Ready({"tools": []}))}

    core.extend(Adds())
    with pytest.raises(ValueError, match=r"'tools/list'.*replaces"):
        core.compose()
    with pytest.raises(TypeError):
        core.methods["ping"] = core.methods["ping"]  # type: ignore[index]

    class Takes(Adds):
        replaces = frozenset({"tools/list"})

    core = _core()
    core.extend(Takes())
    sent = Sent()
    session = core.open_session(sent)
    session.receive(_request(1, "tools/list"))
    assert sent.answer(1)["result"] == {"tools": []}
    with pytest.raises(RuntimeError, match="before it starts"):
        core.extend(Extension())
    await core.aclose()


async def test_initialize_answers_with_what_extensions_add_after_what_they_wait_for() -> None:
    core = _core()
    started = asyncio.Event()

    class Declares(Extension):
        def initialize(self, session: Any, params: JsonObject, result: JsonObject) -> JsonObject:
            return {**result, "capabilities": {**result["capabilities"], "x": {}}}

        def ready(self, session: Any) -> Awaitable[None] | None:
            return None if started.is_set() else started.wait()

    core.extend(Declares())
    sent = Sent()
    session = core.open_session(sent)
    session.receive(_request(1, "initialize"))
    await asyncio.sleep(0.01)
    assert sent == []  # waiting
    started.set()
    await _settle(sent, 1)
    assert "x" in sent.answer(1)["result"]["capabilities"]
    session.receive(_request(2, "initialize"))  # ready now: answered on the spot
    assert "x" in sent.answer(2)["result"]["capabilities"]
    await core.aclose()


async def test_a_2026_discover_waits_for_what_the_handshake_waits_for() -> None:
    """server/discover is the 2026-07-28 handshake: it waits for `ready` as initialize does
    (a gateway's children's first start, so what it declares is what they offer)."""
    core = _core()
    started = asyncio.Event()

    class Waits(Extension):
        def ready(self, session: Any) -> Awaitable[None] | None:
            return None if started.is_set() else started.wait()

    core.extend(Waits())
    sent = Sent()
    session = core.open_session(sent)
    session.receive(_request(1, "server/discover", {"_meta": ENVELOPE}))
    await asyncio.sleep(0.01)
    assert sent == []  # waiting
    started.set()
    await _settle(sent, 1)
    assert "tools" in sent.answer(1)["result"]["capabilities"]
    session.receive(_request(2, "server/discover", {"_meta": ENVELOPE}))  # on the spot now
    assert "tools" in sent.answer(2)["result"]["capabilities"]
    await core.aclose()


async def test_refold_takes_an_interceptor_in_or_out() -> None:
    core = _core()

    class Switch(Extension):
        on = False

        def call_tool(self, call_next: CallTool) -> CallTool:
            if not self.on:
                return call_next

            def refused(name: str, arguments: JsonObject, ctx: RequestContext) -> Any:
                raise McpError(-32602, f"Unknown tool: {name}")

            return refused

    switch = Switch()
    core.extend(switch)
    sent = Sent()
    session = core.open_session(sent)
    session.receive(_request(0, "initialize"))
    assert core.served.call_tool == core.provider.call_tool  # nothing in the way
    switch.on = True
    core.refold()
    session.receive(_call(1, "x"))
    assert sent.answer(1)["error"]["message"] == "Unknown tool: echo"
    await core.aclose()
