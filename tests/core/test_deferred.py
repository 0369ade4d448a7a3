"""A relay's two core pieces: a handler's Deferred answer (answered when resolved, no task),
and `request_nowait` (our request's answer handed to a callback, no future). The guarantees
hold as for tasks: exactly one answer, none once cancelled, batches complete, closing and
draining stop what is left."""

from __future__ import annotations

import asyncio
import gc
import weakref
from collections.abc import Awaitable, Hashable
from typing import Any

import pytest
from codex_mcp.core import Deferred, JsonRpcPeer, McpError, Provider, RequestContext, ServerCore
from codex_mcp.core.calls import CallOptions
from codex_mcp.core.jsonrpc import JsonObject


class Relaying(Provider):
    """Every call's answer is a Deferred the test resolves."""

    features = frozenset({"tools"})  # type: ignore[assignment]

    def __init__(self) -> None:
        super().__init__()
        self.answers: dict[str, Deferred] = {}
        self.cancelled: list[str] = []

    def call_tool(
        self, name: str, arguments: JsonObject, ctx: RequestContext
    ) -> Awaitable[JsonObject]:
        answer = Deferred()
        answer.on_cancel = lambda: self.cancelled.append(name)
        self.answers[name] = answer
        return answer


class Sent(list[Any]):
    def send(self, message: Any, related: Hashable = None) -> None:
        self.append(message)


def open_session(
    version: str = "2025-06-18", provider: Relaying | None = None
) -> tuple[Relaying, Any, Sent]:
    provider = provider or Relaying()
    sent = Sent()
    session = ServerCore(provider, name="t", version="1").open_session(sent)
    session.receive(
        {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": version}}
    )
    sent.clear()
    return provider, session, sent


def call(request_id: int, name: str) -> JsonObject:
    return {"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": {"name": name}}


async def test_resolved_rejected_and_failed_answers() -> None:
    provider, session, sent = open_session()
    for index, name in enumerate(["ok", "rpc", "bug"], start=1):
        session.receive(call(index, name))
    assert sent == [] and session.in_flight == 3  # nothing ran: no task, nothing to answer yet
    provider.answers["ok"].resolve({"content": []})
    provider.answers["rpc"].reject(McpError(-32010, "quota", {"x": 1}))
    provider.answers["bug"].reject(RuntimeError("oops"))
    provider.answers["ok"].resolve({"content": ["again"]})  # a second answer is dropped
    assert sent == [
        {"jsonrpc": "2.0", "id": 1, "result": {"content": []}},
        {
            "jsonrpc": "2.0",
            "id": 2,
            "error": {"code": -32010, "message": "quota", "data": {"x": 1}},
        },
        {"jsonrpc": "2.0", "id": 3, "error": {"code": -32603, "message": "Internal error: oops"}},
    ]
    assert session.in_flight == 0


async def test_cancelled_requests_get_no_answer_and_batches_still_complete() -> None:
    provider, session, sent = open_session("2025-03-26")  # batches allowed
    session.receive([call(1, "a"), call(2, "b"), {"jsonrpc": "2.0", "id": 3, "method": "ping"}])
    session.receive(
        {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 1}}
    )
    assert provider.cancelled == ["a"]
    provider.answers["a"].resolve({"late": True})  # the relay's answer after all: dropped
    assert sent == []
    provider.answers["b"].resolve({"b": True})
    assert sent == [
        [
            {"jsonrpc": "2.0", "id": 3, "result": {}},
            {"jsonrpc": "2.0", "id": 2, "result": {"b": True}},
        ]
    ]


async def test_closing_cancels_and_draining_waits() -> None:
    provider, session, sent = open_session()
    session.receive(call(1, "quick"))
    session.receive(call(2, "never"))
    asyncio.get_running_loop().call_later(0.05, provider.answers["quick"].resolve, {"q": 1})
    await session.drain(0.5)
    # Drained: what did not finish was cancelled, and answered so, as a task would be.
    assert sent == [
        {"jsonrpc": "2.0", "id": 1, "result": {"q": 1}},
        {
            "jsonrpc": "2.0",
            "id": 2,
            "error": {"code": -32603, "message": "Internal error: the handler was cancelled"},
        },
    ]
    assert provider.cancelled == ["never"]
    session.receive(call(3, "open"))
    session.close()  # closed: cancelled, with nobody left to answer
    assert provider.cancelled == ["never", "open"] and len(sent) == 2


async def test_awaiting_a_deferred_and_cancelling_the_waiter() -> None:
    answer = Deferred()
    asyncio.get_running_loop().call_soon(answer.resolve, 42)
    assert await answer == 42
    failed = Deferred()
    failed.reject(McpError(-32602, "bad"))
    with pytest.raises(McpError, match="bad"):
        await failed
    abandoned = Deferred()
    seen: list[str] = []
    abandoned.on_cancel = lambda: seen.append("cancelled")
    waiter = asyncio.ensure_future(_await(abandoned))
    await asyncio.sleep(0)
    waiter.cancel()
    with pytest.raises(asyncio.CancelledError):
        await waiter
    assert seen == ["cancelled"] and abandoned.cancelled


async def _await(answer: Deferred) -> Any:
    return await answer


class Wire:
    """Two peers on an in-memory wire: what one sends, the other receives next loop turn."""

    def __init__(self) -> None:
        self.client = JsonRpcPeer(self)
        self.sent: list[Any] = []

    def send(self, message: Any, related: Hashable = None) -> None:
        self.sent.append(message)


async def test_request_nowait_hands_the_answer_to_a_callback() -> None:
    wire = Wire()
    answers: list[tuple[Any, Any]] = []
    first = wire.client.request_nowait(
        "tools/call", {"name": "a"}, lambda r, e: answers.append((r, e))
    )
    second = wire.client.request_nowait(
        "tools/call", {"name": "b"}, lambda r, e: answers.append((r, e))
    )
    third = wire.client.request_nowait(
        "tools/call", {"name": "c"}, lambda r, e: answers.append((r, e))
    )
    assert [m["id"] for m in wire.sent] == [first, second, third]
    wire.client.receive({"jsonrpc": "2.0", "id": first, "result": {"ok": 1}})
    wire.client.receive(
        {"jsonrpc": "2.0", "id": second, "error": {"code": -32602, "message": "no"}}
    )
    assert answers[0] == ({"ok": 1}, None)
    assert isinstance(answers[1][1], McpError) and answers[1][1].code == -32602
    wire.client.abandon(third, "the caller gave up")
    assert wire.sent[-1] == {
        "jsonrpc": "2.0",
        "method": "notifications/cancelled",
        "params": {"requestId": third, "reason": "the caller gave up"},
    }
    wire.client.receive({"jsonrpc": "2.0", "id": third, "result": {}})  # too late: ignored
    fourth = wire.client.request_nowait("x", None, lambda r, e: answers.append((r, e)))
    wire.client.close()
    assert len(answers) == 3 and answers[2][0] is None and isinstance(answers[2][1], McpError)
    assert fourth not in wire.client._outgoing


class OwnWaiter:
    """A caller's object that waits for its request's answer itself (a relay's call)."""

    method = "tools/call"
    settled = False

    def __init__(self) -> None:
        self.outcomes: list[tuple[str, Any]] = []
        self.on_progress = self.outcomes.append

    def succeed(self, result: JsonObject) -> None:
        self.outcomes.append(("result", result))

    def fail(self, error: Exception) -> None:
        self.outcomes.append(("error", error))


async def test_request_for_answers_the_callers_own_waiter() -> None:
    wire = Wire()
    answered, refused, progressing, left = OwnWaiter(), OwnWaiter(), OwnWaiter(), OwnWaiter()
    first = wire.client.request_for(answered, {"name": "a"})
    second = wire.client.request_for(refused, None)
    third = wire.client.request_for(
        progressing, {"name": "c"}, CallOptions(on_progress=progressing.on_progress)
    )
    fourth = wire.client.request_for(left, {})
    assert wire.sent[0] == {
        "jsonrpc": "2.0",
        "id": first,
        "method": "tools/call",
        "params": {"name": "a"},
    }
    assert wire.sent[2]["params"]["_meta"] == {"progressToken": third}
    assert wire.client._outgoing[first] is answered  # registered as it is: no wrapper
    wire.client.receive({"jsonrpc": "2.0", "id": first, "result": {"ok": 1}})
    wire.client.receive(
        {"jsonrpc": "2.0", "id": second, "error": {"code": -32602, "message": "no"}}
    )
    wire.client.receive(
        {
            "jsonrpc": "2.0",
            "method": "notifications/progress",
            "params": {"progressToken": third, "progress": 1},
        }
    )
    wire.client.receive({"jsonrpc": "2.0", "id": third, "result": {}})
    wire.client.receive({"jsonrpc": "2.0", "id": first, "result": {"again": 1}})  # ignored
    wire.client.close()
    assert answered.outcomes == [("result", {"ok": 1})]
    assert [kind for kind, _ in refused.outcomes] == ["error"]
    assert refused.outcomes[0][1].code == -32602
    assert progressing.outcomes == [{"progressToken": third, "progress": 1}, ("result", {})]
    assert [kind for kind, _ in left.outcomes] == ["error"]  # the connection closed first
    assert fourth not in wire.client._outgoing


class KeepsItsContext(Deferred):
    """A relay's answer keeps its request's context (gateway/relay/calls.py's RelayedCall does)."""

    __slots__ = ("__weakref__", "ctx")

    def __init__(self, ctx: RequestContext) -> None:
        super().__init__()
        self.ctx = ctx


async def test_a_settled_deferred_is_freed_without_the_collector() -> None:
    """Answered or cancelled, a Deferred and what it holds (a relayed 50 MB result) are freed
    at once: the request's context no longer refers to it, so they make no cycle that only
    the collector would break."""
    made: list[KeepsItsContext] = []

    class Keeping(Relaying):
        def call_tool(
            self, name: str, arguments: JsonObject, ctx: RequestContext
        ) -> KeepsItsContext:
            made.append(KeepsItsContext(ctx))
            return made[-1]

    _, session, sent = open_session(provider=Keeping())
    gc.disable()
    try:
        session.receive(call(1, "answered"))
        session.receive(call(2, "cancelled"))
        answered, cancelled = (weakref.ref(answer) for answer in made)
        made.pop(0).resolve({"content": [{"type": "text", "text": "x" * 1000}]})
        session.receive(
            {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 2}}
        )
        made.clear()
        assert answered() is None and cancelled() is None
    finally:
        gc.enable()
    assert sent == [
        {"jsonrpc": "2.0", "id": 1, "result": {"content": [{"type": "text", "text": "x" * 1000}]}}
    ]
