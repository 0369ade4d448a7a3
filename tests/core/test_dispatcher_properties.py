"""Property-based: random conversations never crash the session, every request id is
answered exactly once (a cancelled one at most once), and every request the server makes
of the client ends, whatever the client answers.

Each conversation negotiates a version first (2025-03-26 allows batches, later ones do
not), and the client answers the server's real outstanding elicitations, with good
replies, errors, and malformed ones (a non-integer error code, a non-object error or
result, an id of the wrong type), interleaved with everything else.
"""

from __future__ import annotations

import asyncio
from collections import Counter
from typing import Any

import pytest
from codex_mcp import Context, Server
from codex_mcp.core import ServerCore
from codex_mcp.core.versions import allows_batches
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

SCHEMA = {"type": "object", "properties": {"name": {"type": "string"}}}


def build_core() -> ServerCore:
    server = Server("props", page_size=2)

    @server.tool()
    async def echo(message: str) -> str:
        return message

    @server.tool()
    async def slow(seconds: float) -> str:
        await asyncio.sleep(min(max(seconds, 0), 0.01))
        return "done"

    @server.tool()
    def boom() -> str:
        raise ValueError("no")

    @server.tool()
    async def ask(ctx: Context) -> str:
        answer = await ctx.elicit("who?", SCHEMA)
        return f"answer {answer.get('content')}"

    return server.core


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=5),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3)
    ),
    max_leaves=6,
)
methods = st.sampled_from(
    [
        "ping",
        "tools/list",
        "tools/call",
        "resources/list",
        "prompts/list",
        "logging/setLevel",
        "completion/complete",
        "echo",
        "mcp.capabilities",
        "nope",
        "",
    ]
)
tool_params = st.fixed_dictionaries(
    {"name": st.sampled_from(["echo", "slow", "boom", "ask", "ask", "missing"])},
    optional={"arguments": st.one_of(json_values, st.fixed_dictionaries({"message": json_values}))},
)
request_ids = st.one_of(st.integers(0, 50), st.sampled_from(["a", "b", ""]))


@st.composite
def requests(draw: Any) -> dict[str, Any]:
    method = draw(methods)
    params = (
        draw(tool_params) if method == "tools/call" else draw(st.one_of(st.none(), json_values))
    )
    message: dict[str, Any] = {"jsonrpc": "2.0", "id": draw(request_ids), "method": method}
    if params is not None:
        message["params"] = params
    return message


@st.composite
def messages(draw: Any) -> Any:
    kind = draw(
        st.sampled_from(
            ["request", "request", "request", "notification", "null-id", "cancel", "batch", "junk"]
        )
    )
    if kind == "request":
        return draw(requests())
    if kind == "notification":
        method = draw(st.sampled_from(["notifications/initialized", "notifications/progress", "x"]))
        return {"jsonrpc": "2.0", "method": method}
    if kind == "null-id":  # seed 003's notification
        return {"jsonrpc": "2.0", "id": None, "method": draw(methods)}
    if kind == "cancel":
        return {
            "jsonrpc": "2.0",
            "method": "notifications/cancelled",
            "params": {"requestId": draw(request_ids)},
        }
    if kind == "batch":
        return draw(
            st.lists(
                st.one_of(requests(), json_values, st.just({"jsonrpc": "2.0", "method": "x"})),
                max_size=4,
            )
        )
    return draw(json_values)


def replies_to(request_id: int) -> st.SearchStrategy[dict[str, Any]]:
    """Answers to one server-to-client request, good and bad. Those whose id cannot name
    the request leave it outstanding (it is answered properly later)."""
    good = {"jsonrpc": "2.0", "id": request_id, "result": {"action": "accept", "content": {}}}
    return st.sampled_from(
        [
            good,
            {**good, "id": str(request_id)},  # a stringified id still correlates
            {"jsonrpc": "2.0", "id": request_id, "error": {"code": -1, "message": "no"}},
            {"jsonrpc": "2.0", "id": request_id, "error": {"code": "abc", "message": "x"}},
            {"jsonrpc": "2.0", "id": request_id, "error": {"code": None}},
            {"jsonrpc": "2.0", "id": request_id, "error": []},
            {"jsonrpc": "2.0", "id": request_id, "result": [1, 2]},
            {"jsonrpc": "2.0", "id": [request_id], "result": {}},
            {"jsonrpc": "2.0", "id": {"n": request_id}, "result": {}},
            {"jsonrpc": "2.0", "id": True, "result": {"content": {"name": "BOOL"}}},
            {"jsonrpc": "2.0", "id": float(request_id), "result": {"content": {"name": "FLOAT"}}},
        ]
    )


class Collector:
    def __init__(self) -> None:
        self.messages: list[Any] = []

    def send(self, message: Any, related: Any = None) -> None:
        self.messages.append(message)


def _flatten(items: list[Any]) -> list[dict[str, Any]]:
    return [reply for item in items for reply in (item if isinstance(item, list) else [item])]


@pytest.mark.slow
@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_random_conversations_answer_each_request_once(data: st.DataObject) -> None:
    async def run() -> None:
        out = Collector()
        session = build_core().open_session(out)
        version = data.draw(st.sampled_from(["2025-03-26", "2025-06-18", "2025-11-25"]))
        session.receive(
            {
                "jsonrpc": "2.0",
                "id": "init",
                "method": "initialize",
                "params": {"protocolVersion": version, "capabilities": {"elicitation": {}}},
            }
        )
        sent: Counter[Any] = Counter({"init": 1})
        cancelled: set[Any] = set()
        answered_asks: set[int] = set()
        for _ in range(data.draw(st.integers(0, 30))):
            outstanding = [
                m["id"]
                for m in _flatten(out.messages)
                if m.get("method") == "elicitation/create" and m["id"] not in answered_asks
            ]
            if outstanding and data.draw(st.booleans()):
                target = data.draw(st.sampled_from(outstanding))
                reply = data.draw(replies_to(target))
                if type(reply["id"]) in (int, str) and ("error" in reply or "result" in reply):
                    answered_asks.add(target)
                session.receive(reply)
            else:
                message = data.draw(messages())
                batch = message if isinstance(message, list) else None
                if batch and allows_batches(session.protocol_version):
                    items = batch
                else:
                    items = [message] if not batch else []
                for item in items:
                    if (
                        isinstance(item, dict)
                        and "method" in item
                        and type(item.get("id")) in (int, str)
                    ):
                        sent[item["id"]] += 1
                    if isinstance(item, dict) and item.get("method") == "notifications/cancelled":
                        cancelled.add(item["params"]["requestId"])
                session.receive(message)
            await asyncio.sleep(0)
        # Answer whatever the server still asks, and let every call finish.
        for _ in range(200):
            for ask in _flatten(out.messages):
                if ask.get("method") == "elicitation/create" and ask["id"] not in answered_asks:
                    answered_asks.add(ask["id"])
                    session.receive(
                        {"jsonrpc": "2.0", "id": ask["id"], "result": {"action": "decline"}}
                    )
            if session.in_flight == 0:
                break
            await asyncio.sleep(0.002)
        assert session.in_flight == 0, "a request never finished"

        answered: Counter[Any] = Counter()
        for reply in _flatten(out.messages):
            assert "result" in reply or "error" in reply or "method" in reply
            if "method" not in reply and reply.get("id") is not None:
                answered[reply["id"]] += 1
            # A reply whose id was true or 1.0 must never have resolved a real request.
            text = str(reply.get("result", ""))
            assert "BOOL" not in text and "FLOAT" not in text, reply
        for request_id, count in sent.items():
            if request_id in cancelled:
                assert answered[request_id] <= count
            else:
                # Duplicates of an id still in flight are refused, so each send gets one answer.
                assert answered[request_id] == count, (request_id, sent, answered)
        assert set(answered) <= set(sent)
        await session.aclose()

    asyncio.run(run())
