"""Input-required rounds in the core: what a handler sees on each run (in process, a real
ServerCore and session, the messages collected as a transport would write them)."""

from __future__ import annotations

import asyncio
from typing import Any

from codex_mcp import Context, Server

from .stateless_helpers import accept, params, text_of


class Collected:
    def __init__(self) -> None:
        self.messages: list[Any] = []

    def send(self, message: Any, related: Any = None) -> None:
        self.messages.append(message)


async def answer(session: Any, out: Collected, request_id: int, method: str, body: Any) -> Any:
    session.receive({"jsonrpc": "2.0", "id": request_id, "method": method, "params": body})
    return await answer_to(out, request_id)


async def answer_to(out: Collected, request_id: int) -> Any:
    for _ in range(400):
        for message in out.messages:
            if message.get("id") == request_id and "method" not in message:
                return message
        await asyncio.sleep(0.005)
    raise AssertionError(f"no answer to {request_id}")


async def test_code_before_a_question_reruns_but_once_does_not() -> None:
    server = Server("rounds")
    runs: list[int] = []
    computed: list[str] = []

    @server.tool()
    async def plan(ctx: Context) -> str:
        runs.append(ctx.round)
        value = await ctx.once("plan", lambda: computed.append("x") or "the plan")
        first = await ctx.elicit("one?", {"type": "object", "properties": {}})
        second = await ctx.elicit("two?", {"type": "object", "properties": {}})
        return f"{value}: {first['action']} {second['action']}"

    out = Collected()
    session = server.core.open_session(out)
    r1 = (await answer(session, out, 1, "tools/call", params(name="plan")))["result"]
    assert list(r1["inputRequests"]) == ["elicit-1"]  # automatic keys, by call order
    r2 = (
        await answer(
            session,
            out,
            2,
            "tools/call",
            params(
                name="plan", inputResponses={"elicit-1": accept()}, requestState=r1["requestState"]
            ),
        )
    )["result"]
    assert list(r2["inputRequests"]) == ["elicit-2"]
    r3 = (
        await answer(
            session,
            out,
            3,
            "tools/call",
            params(
                name="plan",
                inputResponses={"elicit-2": {"action": "decline"}},
                requestState=r2["requestState"],
            ),
        )
    )["result"]
    assert text_of(r3) == "the plan: accept decline"
    assert runs == [1, 2, 3]
    assert computed == ["x"]  # ctx.once ran on the first run only


async def test_an_answer_to_a_different_question_is_asked_again() -> None:
    server = Server("rounds")
    question = {"text": "Delete a.txt?"}

    @server.tool()
    async def confirm(ctx: Context) -> str:
        answer = await ctx.elicit(question["text"], {"type": "object", "properties": {}}, key="ok")
        return f"{question['text']} {answer['action']}"

    out = Collected()
    session = server.core.open_session(out)
    r1 = (await answer(session, out, 1, "tools/call", params(name="confirm")))["result"]
    question["text"] = "Delete b.txt?"  # the handler now asks something else under "ok"
    again = (
        await answer(
            session,
            out,
            2,
            "tools/call",
            params(
                name="confirm", inputResponses={"ok": accept()}, requestState=r1["requestState"]
            ),
        )
    )["result"]
    assert again["resultType"] == "input_required"
    assert again["inputRequests"]["ok"]["params"]["message"] == "Delete b.txt?"


async def test_legacy_sessions_get_server_to_client_requests_from_the_same_tool() -> None:
    server = Server("rounds")

    @server.tool()
    async def hello(ctx: Context) -> str:
        answer = await ctx.elicit("Name?", {"type": "object", "properties": {}}, key="name")
        return f"Hello, {answer['content']['name']}!"

    out = Collected()
    session = server.core.open_session(out)
    session.receive(
        {
            "jsonrpc": "2.0",
            "id": 0,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-06-18",
                "capabilities": {"elicitation": {}},
                "clientInfo": {"name": "t", "version": "1"},
            },
        }
    )
    session.receive(
        {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "hello"}}
    )
    for _ in range(200):
        asked = [m for m in out.messages if m.get("method") == "elicitation/create"]
        if asked:
            break
        await asyncio.sleep(0.005)
    assert "mode" not in asked[0]["params"]  # the legacy shape
    session.receive({"jsonrpc": "2.0", "id": asked[0]["id"], "result": accept(name="Lee")})
    done = await answer_to(out, 1)
    assert done["result"] == {"content": [{"type": "text", "text": "Hello, Lee!"}]}


async def test_server_wide_cache_hints() -> None:
    server = Server("cached", cache_ttl_ms=5_000, cache_scope="public")

    @server.tool()
    def noop() -> str:
        return ""

    out = Collected()
    session = server.core.open_session(out)
    listed = (await answer(session, out, 1, "tools/list", params()))["result"]
    assert (listed["ttlMs"], listed["cacheScope"]) == (5_000, "public")
    found = (await answer(session, out, 2, "server/discover", params()))["result"]
    assert (found["ttlMs"], found["cacheScope"]) == (5_000, "public")


async def test_a_resource_read_asks_too_and_its_state_is_bound_to_the_uri() -> None:
    server = Server("rounds")

    @server.resource("notes://{name}")
    async def note(name: str, ctx: Context) -> str:
        answer = await ctx.elicit(f"Unlock {name}?", {"type": "object", "properties": {}})
        return f"{name}: {answer['action']}"

    out = Collected()
    session = server.core.open_session(out)
    r1 = (await answer(session, out, 1, "resources/read", params(uri="notes://a")))["result"]
    assert r1["resultType"] == "input_required"
    elsewhere = await answer(
        session,
        out,
        2,
        "resources/read",
        params(
            uri="notes://b", inputResponses={"elicit-1": accept()}, requestState=r1["requestState"]
        ),
    )
    assert elsewhere["error"]["data"] == {"reason": "wrong_request"}
    done = (
        await answer(
            session,
            out,
            3,
            "resources/read",
            params(
                uri="notes://a",
                inputResponses={"elicit-1": accept()},
                requestState=r1["requestState"],
            ),
        )
    )["result"]
    assert done["contents"][0]["text"] == "a: accept"
    assert (done["ttlMs"], done["cacheScope"]) == (0, "private")
