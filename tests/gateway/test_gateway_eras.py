"""Both protocol eras through the gateway. Its children are spoken to in the era they were
started in (legacy `initialize`): a 2026-07-28 front request's envelope is not passed on, so a
dual-era child answers as a legacy server, and its questions to the client are the gateway's
to translate. For a 2026-07-28 front, a child's `elicitation/create` (or sampling, roots)
becomes an input-required round: the call is answered `input_required`, and its retry runs
the child's call again, whose question then finds its answer. Real gateway, real children."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from codex_mcp.core.jsonrpc import JsonObject

from .gateway_helpers import EXAMPLES, gateway, stdio, write_config

MODERN = "2026-07-28"
EVERYTHING_RELAYED = {"sampling": {}, "elicitation": {}, "roots": {}}


def _config(tmp_path: Path) -> Path:
    return write_config(tmp_path, {"ex": stdio(EXAMPLES, client_capabilities=EVERYTHING_RELAYED)})


async def test_a_legacy_childs_question_is_a_round_for_a_modern_front(tmp_path: Path) -> None:
    asked: list[JsonObject] = []

    def elicit(params: JsonObject, _ctx: Any) -> JsonObject:
        asked.append(params)
        return {"action": "accept", "content": {"username": "ada", "email": "a@b.c"}}

    def sample(params: JsonObject, _ctx: Any) -> JsonObject:
        text = params["messages"][0]["content"]["text"]
        return {"role": "assistant", "content": {"type": "text", "text": text.upper()},
                "model": "m", "stopReason": "endTurn"}  # fmt: skip

    client = gateway(_config(tmp_path), mode=MODERN, elicitation_handler=elicit,
                     sampling_handler=sample)  # fmt: skip
    async with client:
        assert client.session.modern is not None  # the front speaks 2026-07-28
        elicited = await client.call_tool("ex__test_elicitation", {"message": "Who?"})
        assert "action=accept" in elicited.text and "ada" in elicited.text, elicited.text
        assert len(asked) == 1 and asked[0]["message"] == "Who?"
        sampled = await client.call_tool("ex__test_sampling", {"prompt": "hello"})
        assert sampled.text == "LLM response: HELLO", sampled.text


async def test_a_modern_front_without_the_capability_is_told_so(tmp_path: Path) -> None:
    async with gateway(_config(tmp_path), mode=MODERN) as client:  # declares no elicitation
        result = await client.call_tool("ex__test_elicitation", {"message": "Who?"}, retries=0)
    assert result.is_error and "elicitation" in result.text, result.text
