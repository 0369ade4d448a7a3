"""A shared stdio child that asks the client (elicitation) with nothing on the wire to say
which call it is for, as the official SDKs' servers do, behind `codex-mcp-http` with
several sessions: a question never reaches a session whose call it is not, once a second
session has used the child a question outside any call reaches none, what is refused names
the fix, and what a child used by one session alone says is that session's
(specs/gateway.md, "Relaying": Which call).

All over real transports: the gateway as a subprocess, a child on the official Python SDK
(servers/sdk_asker.py), our client over real sockets."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from codex_mcp.client import Client, McpError
from codex_mcp.core.jsonrpc import JsonObject
from codex_mcp.gateway import asked_record
from codex_mcp.gateway.config.load import read_config

from .gateway_helpers import PY, SERVERS, launch_http_gateway, status, stdio, stop, until
from .gateway_helpers import write_config as write

ASKER = [PY, str(SERVERS / "sdk_asker.py")]
#: The child is the official Python SDK's server (a real peer), behind a gateway process.
pytestmark = pytest.mark.interop
FIX = '"per_session": true'
ROUNDS = 6


def asker(**extra: Any) -> dict[str, Any]:
    return stdio(ASKER, **extra)


class Front:
    """One client session of the gateway and every question put to it."""

    def __init__(self, url: str, name: str) -> None:
        self.name = name
        self.asked: list[str] = []
        self.logs: list[Any] = []
        self.client = Client.http(
            url,
            elicitation_handler=self._elicit,
            logging_handler=lambda params: self.logs.append(params.get("data")),
        )

    def _elicit(self, params: JsonObject) -> JsonObject:
        self.asked.append(str(params.get("message")))
        return {"action": "accept", "content": {"name": self.name}}

    async def call(self, tool: str, **arguments: Any) -> str:
        """The call's text, or `Error: ` and the error (the SDK fails the call with the
        error its question got)."""
        try:
            result = await self.client.call_tool(f"ask__{tool}", arguments, retries=0, timeout=60)
        except McpError as error:
            return f"Error: {error.message}"
        return result.text

    def only_own_questions(self) -> None:
        strangers = [q for q in self.asked if f", {self.name}?" not in q]
        assert not strangers, f"{self.name} was asked another session's question: {strangers}"


@pytest.fixture
def serve(tmp_path: Path) -> Any:
    processes = []
    logs: list[str] = []

    def start(servers: dict[str, Any]) -> tuple[str, list[str]]:
        process, url = launch_http_gateway(write(tmp_path, servers), log=logs)
        processes.append(process)
        return url, logs

    yield start
    for process in processes:
        stop(process)


async def test_concurrent_sessions_never_get_each_others_question(serve: Any) -> None:
    """A and B call the shared child's asking tool at the same time, round after round:
    each question the child makes carries the caller's name; none reaches the other
    session, and every one refused says what to change."""
    url, _ = serve({"ask": asker()})
    a, b = Front(url, "A"), Front(url, "B")
    async with a.client, b.client:
        for _ in range(ROUNDS):
            texts = await asyncio.gather(
                *(front.call("ask_name", who=front.name) for front in (a, b) for _ in range(2))
            )
            for text in texts:
                assert text.startswith(("accept:", "Error")), text
                if not text.startswith("accept:"):
                    assert FIX in text and "'ask'" in text, text
        a.only_own_questions()
        b.only_own_questions()
        # Once both sessions have used it, no answer can come from a guess.
        assert await a.call("ask_name", who="A") != "accept:A"
        assert (await status(a.client))["ask"]["unrouted_in_calls"] >= 1


async def test_attribution_ends_for_good_once_a_second_session_calls(serve: Any) -> None:
    """While only A uses the child, its question in A's only call is A's (nothing of another
    session can be in the child). Once B has called anything, A's next question is refused,
    though A's call is again the only one in flight: B's call may have left work behind."""
    url, logs = serve({"ask": asker()})
    a, b = Front(url, "A"), Front(url, "B")
    async with a.client, b.client:
        assert await a.call("ask_name", who="A") == "accept:A"
        assert await b.call("hold", seconds=0) == "held"
        refused = await a.call("ask_name", who="A")
        assert refused.startswith("Error") and FIX in refused, refused
        assert a.asked == ["Your name, A?"] and b.asked == []
        server = (await status(b.client))["ask"]
        assert server["unrouted_in_calls"] == 1
        assert FIX in server["advice"] and "during calls" in server["advice"]
        assert server["sessions"] == "several"
    # One warning on stderr names the child and the setting, in the file it lives in.
    warned = [line for line in logs if "ask:" in line and FIX in line]
    assert len(warned) == 1, logs
    assert ".mcp.json" in warned[0] and "during a call" in warned[0]


async def test_a_question_outside_any_call_reaches_no_session(serve: Any) -> None:
    """A's call schedules a question for after it has returned; it comes while B's call is
    the only one in flight: neither A nor B is asked, and the child is told no."""
    url, _ = serve({"ask": asker()})
    a, b = Front(url, "A"), Front(url, "B")
    async with a.client, b.client:
        held = asyncio.ensure_future(b.call("hold", seconds=60))  # until the test is done
        assert await a.call("ask_later", who="A", delay=1.0) == "scheduled"

        async def refused_during_a_call() -> bool:
            return (await status(a.client))["ask"]["unrouted_in_calls"] >= 1

        await until(refused_during_a_call, timeout=30, what="the background question refused")
        assert not held.done(), "B's call was in flight when the question came"
        held.cancel()
        await asyncio.gather(held, return_exceptions=True)
        assert a.asked == [] and b.asked == []
        assert not [text for text in a.logs + b.logs if "Background" in str(text)]


async def test_what_a_child_used_by_one_session_alone_says_outside_calls_is_that_sessions(
    serve: Any,
) -> None:
    """One session alone has used the child: whatever it says, outside a call or during
    several of that session's calls, can be no other session's, so it is asked (on the
    session's own stream), and the child's log line after it reaches it too."""
    url, _ = serve({"ask": asker()})
    a = Front(url, "A")
    async with a.client:
        assert await a.call("ask_later", who="A", delay=0.2) == "scheduled"
        await until(lambda: "background answered: accept" in a.logs, timeout=30, what=a.logs)
        assert a.asked == ["Background, A?"]
        texts = await asyncio.gather(*(a.call("ask_name", who="A") for _ in range(3)))
        assert texts == ["accept:A"] * 3  # three calls in flight: all A's all the same
        server = (await status(a.client))["ask"]
        assert server["sessions"] == "one" and server["unrouted_messages"] == 0


async def test_a_2026_07_28_caller_counts_as_another_session(serve: Any) -> None:
    """A second way in: a 2026-07-28 caller has no session to compare, so once it has
    called the child, A's question is refused like after a second legacy session's call,
    and A's background question reaches no one."""
    url, _ = serve({"ask": asker()})
    a = Front(url, "A")
    async with a.client, Client.http(url, mode="2026-07-28") as modern:
        assert await a.call("ask_name", who="A") == "accept:A"
        held = await modern.call_tool("ask__hold", {"seconds": 0}, retries=0)
        assert held.text == "held"
        refused = await a.call("ask_name", who="A")
        assert refused.startswith("Error") and FIX in refused, refused
        assert await a.call("ask_later", who="A", delay=0.1) == "scheduled"

        async def background_refused() -> bool:
            return (await status(a.client))["ask"]["unrouted_messages"] >= 2

        await until(background_refused, timeout=30, what="the background question refused")
        assert a.asked == ["Your name, A?"]
        assert (await status(a.client))["ask"]["sessions"] == "several"


async def test_the_named_fix_serves_each_session_its_own_questions(serve: Any) -> None:
    """With "per_session": true, both sessions ask at the same time and each gets its own."""
    url, _ = serve({"ask": asker(per_session=True)})
    a, b = Front(url, "A"), Front(url, "B")
    async with a.client, b.client:
        for _ in range(3):
            texts = await asyncio.gather(a.call("ask_name", who="A"), b.call("ask_name", who="B"))
            assert texts == ["accept:A", "accept:B"]
        a.only_own_questions()
        b.only_own_questions()
        assert len(a.asked) == len(b.asked) == 3


@pytest.mark.parametrize("who", ["", "x" * 10_000, "A?, B"])
async def test_a_question_naming_another_session_is_still_only_its_callers(
    serve: Any, who: str
) -> None:
    """What the question says is the child's business: attribution never reads it."""
    url, _ = serve({"ask": asker()})
    a = Front(url, "A")
    async with a.client:
        text = await a.call("ask_name", who=who)
        assert text == "accept:A"
        assert a.asked == [f"Your name, {who}?"]


# -- the record lint reads: a file anyone with the cache directory may have written ----------

HOSTILE_RECORDS = {
    "not json": b"{{{",
    "a list": b'["elicitation/create"]',
    "wrong format": b'{"format": 2, "kinds": ["elicitation/create"]}',
    "kinds not a list": b'{"format": 1, "kinds": "elicitation/create"}',
    "too big": b'{"format": 1, "kinds": ["logging"], "pad": "' + b"x" * 10_000 + b'"}',
    "too deep": b'{"format": 1, "kinds": [[[["logging"]]]]}',
    "not text": b"\xff\xfe\x00",
}


@pytest.mark.parametrize("content", HOSTILE_RECORDS.values(), ids=HOSTILE_RECORDS.keys())
def test_a_hostile_record_is_no_record_and_is_rewritten(tmp_path: Path, content: bytes) -> None:
    server = read_config(write(tmp_path, {"ask": asker()})).servers[0]
    path = asked_record.record_path(server, tmp_path)
    path.write_bytes(content)
    assert asked_record.recorded(server, tmp_path) == []
    asked_record.record(server, "roots/list", tmp_path)
    assert asked_record.recorded(server, tmp_path) == ["roots/list"]


def test_a_record_says_only_the_kinds_the_gateway_writes(tmp_path: Path) -> None:
    server = read_config(write(tmp_path, {"ask": asker()})).servers[0]
    kinds = ["logging", "rm -rf /", "elicitation/create", 7, None, "\n\x1b[31m"]
    asked_record.record_path(server, tmp_path).write_text(json.dumps({"format": 1, "kinds": kinds}))
    assert asked_record.recorded(server, tmp_path) == ["elicitation/create", "logging"]
    asked_record.record(server, "\x1b[2J", tmp_path)  # not a kind: not written
    assert asked_record.recorded(server, tmp_path) == ["elicitation/create", "logging"]
