"""Property-based: random message sequences never crash the dispatcher, and every request
id is answered exactly once (a cancelled one at most once)."""

from __future__ import annotations

import asyncio
from collections import Counter
from typing import Any

from codex_mcp import Server
from codex_mcp.core import ServerCore
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st


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
        "initialize",
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
    {"name": st.sampled_from(["echo", "slow", "boom", "missing"])},
    optional={"arguments": st.one_of(json_values, st.fixed_dictionaries({"message": json_values}))},
)


@st.composite
def messages(draw: Any, request_ids: st.SearchStrategy[int]) -> Any:
    kind = draw(
        st.sampled_from(
            ["request", "request", "request", "notification", "cancel", "response", "junk", "batch"]
        )
    )
    if kind == "request":
        method = draw(methods)
        params = (
            draw(tool_params) if method == "tools/call" else draw(st.one_of(st.none(), json_values))
        )
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": draw(request_ids), "method": method}
        if params is not None:
            message["params"] = params
        return message
    if kind == "notification":
        return {
            "jsonrpc": "2.0",
            "method": draw(
                st.sampled_from(["notifications/initialized", "notifications/progress", "x"])
            ),
        }
    if kind == "cancel":
        return {
            "jsonrpc": "2.0",
            "method": "notifications/cancelled",
            "params": {"requestId": draw(request_ids)},
        }
    if kind == "response":
        return {"jsonrpc": "2.0", "id": draw(request_ids), "result": {}}
    if kind == "batch":
        return draw(
            st.lists(
                st.just({"jsonrpc": "2.0", "id": draw(request_ids), "method": "ping"}), max_size=2
            )
        )
    return draw(json_values)


class Collector:
    def __init__(self) -> None:
        self.messages: list[Any] = []

    def send(self, message: Any, related_request_id: Any = None) -> None:
        self.messages.append(message)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(messages(st.integers(0, 10_000)), max_size=25))
def test_random_sequences_answer_each_request_once(sequence: list[Any]) -> None:
    async def run() -> tuple[Counter[Any], set[Any], Counter[Any]]:
        out = Collector()
        session = build_core().open_session(out)
        sent: Counter[Any] = Counter()
        cancelled: set[Any] = set()
        for message in sequence:
            if isinstance(message, dict) and "method" in message and "id" in message:
                sent[message["id"]] += 1
            if isinstance(message, dict) and message.get("method") == "notifications/cancelled":
                cancelled.add(message["params"]["requestId"])
            session.receive(message)
        for _ in range(50):
            await asyncio.sleep(0.005)
            if session.in_flight == 0:
                break
        answered: Counter[Any] = Counter()
        for item in out.messages:
            for reply in item if isinstance(item, list) else [item]:
                assert "result" in reply or "error" in reply or "method" in reply
                if "method" not in reply and reply.get("id") is not None:
                    answered[reply["id"]] += 1
        session.close()
        return sent, cancelled, answered

    sent, cancelled, answered = asyncio.run(run())
    for request_id, count in sent.items():
        if request_id in cancelled:
            assert answered[request_id] <= count
        else:
            # Duplicates of an id still in flight are refused, so each send gets one answer.
            assert answered[request_id] == count, (request_id, sent, answered)
    assert set(answered) <= set(sent)
