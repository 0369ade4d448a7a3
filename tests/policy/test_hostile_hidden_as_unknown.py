"""A hidden item cannot be told from one that does not exist (issue 39; specs/policy.md,
"Enforcement"): for every method that names a tool, resource, prompt or skill, in both
revisions, on a plain server and through a gateway, what a caller gets for a hidden name is
byte for byte what it gets for an unknown one, apart from the name. The unknown names sit
where the hidden ones do (behind the gateway: in the child's namespace, which the child
answers for). Real processes on 127.0.0.1: `codex-mcp-http` serving the hideable child, and
a gateway of it, over raw Streamable HTTP."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from support.polling import until
from support.processes import HttpProcess

from .policy_helpers import ACCEPT, META, Caller, gateway_server, write_policy

HIDEABLE = Path(__file__).parent / "servers" / "hideable.py"
#: Every secret thing, by the child's own names (so the rules hold behind the gateway).
HIDING = {
    "default": "allow",
    "rules": [
        {
            "effect": "deny",
            "tool": [
                "secret_tool",
                "secret_prompt",
                "mem://secret",
                "skill://secret-skill/SKILL.md",
            ],
        }
    ],
}
#: The unknown token sorts beside the hidden one (a listen acknowledges its URIs sorted).
HIDDEN, UNKNOWN = "secret", "sunken"

Name = Callable[[str, str], str]  # (kind, the token: HIDDEN or UNKNOWN) -> what a client sends


def plain_name(kind: str, token: str) -> str:
    return {"tool": f"{token}_tool", "prompt": f"{token}_prompt", "resource": f"mem://{token}",
            "skill": f"skill://{token}-skill"}[kind]  # fmt: skip


def gateway_name(kind: str, token: str) -> str:
    own = plain_name(kind, token)
    return f"kid__{own}" if "://" not in own else own.replace("://", "://kid/", 1)


#: (label, method, params of the name, the revisions it is asked in)
CASES: list[tuple[str, str, Callable[[Name, str], dict[str, Any]], tuple[str, ...]]] = [
    ("call", "tools/call", lambda n, t: {"name": n("tool", t), "arguments": {}}, ("legacy", "2026")),
    ("task call", "tools/call", lambda n, t: {"name": n("tool", t), "arguments": {}, "task": {}}, ("legacy",)),
    ("prompt", "prompts/get", lambda n, t: {"name": n("prompt", t), "arguments": {"topic": "x"}}, ("legacy", "2026")),
    ("read", "resources/read", lambda n, t: {"uri": n("resource", t)}, ("legacy", "2026")),
    ("subscribe", "resources/subscribe", lambda n, t: {"uri": n("resource", t)}, ("legacy",)),
    ("unsubscribe", "resources/unsubscribe", lambda n, t: {"uri": n("resource", t)}, ("legacy",)),
    ("complete prompt", "completion/complete", lambda n, t: {"ref": {"type": "ref/prompt", "name": n("prompt", t)}, "argument": {"name": "topic", "value": ""}}, ("legacy", "2026")),
    ("complete resource", "completion/complete", lambda n, t: {"ref": {"type": "ref/resource", "uri": n("resource", t)}, "argument": {"name": "part", "value": ""}}, ("legacy", "2026")),
    ("skill", "skills/get", lambda n, t: {"uri": n("skill", t) + "/SKILL.md"}, ("legacy", "2026")),
    ("skill file", "resources/read", lambda n, t: {"uri": n("skill", t) + "/notes/extra.md"}, ("legacy", "2026")),
    ("skill folder", "resources/directory/read", lambda n, t: {"uri": n("skill", t) + "/notes"}, ("legacy", "2026")),
]  # fmt: skip


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, HttpProcess]]:
    directory = tmp_path_factory.mktemp("hidden-as-unknown")
    policy = write_policy(directory, HIDING)
    plain = HttpProcess("--serve", str(HIDEABLE), "--policy", str(policy))
    try:
        gateway = gateway_server(directory, policy, {"kid": {}}, child=HIDEABLE)
    except BaseException:
        plain.stop()
        raise
    yield {"plain": plain, "gateway": gateway}
    plain.stop()
    gateway.stop()


@pytest.fixture
async def caller(served: dict[str, HttpProcess], request: pytest.FixtureRequest) -> AsyncIterator[tuple[Caller, Name]]:  # fmt: skip
    kind = request.param
    name = plain_name if kind == "plain" else gateway_name
    async with aiohttp.ClientSession() as http:
        caller = await Caller(http, served[kind].url).open()

        async def up() -> bool:  # the gateway's child starts in the background
            return name("tool", "open") in await caller.listed("tools")

        await until(up, 30, "the child's tools listed")
        yield caller, name


def _same_but_the_name(hidden: Any, unknown: Any) -> None:
    shown = json.dumps(unknown, sort_keys=True).replace(UNKNOWN, HIDDEN)
    assert json.dumps(hidden, sort_keys=True) == shown, (hidden, unknown)


def _answer(reply: dict[str, Any]) -> Any:
    """What a client learns from a reply: its result or error, or its HTTP refusal."""
    if "http_status" in reply:
        return reply["http_status"], _answer(json.loads(reply["body"]))
    return {key: value for key, value in reply.items() if key not in ("id", "jsonrpc")}


@pytest.mark.parametrize("caller", ["plain", "gateway"], indirect=True)
@pytest.mark.parametrize(("label", "method", "params", "eras"), CASES, ids=[c[0] for c in CASES])
async def test_a_hidden_name_is_answered_as_an_unknown_one(
    caller: tuple[Caller, Name], label: str, method: str, params: Any, eras: tuple[str, ...]
) -> None:
    client, name = caller
    for era in eras:
        answers = []
        for token in (HIDDEN, UNKNOWN):
            asked = params(name, token)
            if era == "legacy":
                reply = await client.ask(method, asked)
            else:  # with the Mcp-Name header the revision asks of these three
                header = {"tools/call": "name", "prompts/get": "name", "resources/read": "uri"}
                named = asked[header[method]] if method in header else None
                reply = await client.stateless(method, asked, named)
            answers.append(_answer(reply))
        _same_but_the_name(*answers)


@pytest.mark.parametrize("caller", ["plain", "gateway"], indirect=True)
async def test_a_direct_method_of_a_hidden_tool_is_an_unknown_method(
    caller: tuple[Caller, Name],
) -> None:
    client, name = caller
    answers = [_answer(await client.ask(name("tool", t), {})) for t in (HIDDEN, UNKNOWN)]
    _same_but_the_name(*answers)


async def _acknowledged(client: Caller, uris: list[str]) -> Any:
    """The first message of a 2026-07-28 listen naming `uris` (its acknowledgement, or the
    refusal), then the listen is ended by closing its stream."""
    body = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "subscriptions/listen",
        "params": {"notifications": {"resourceSubscriptions": uris}, "_meta": META},
    }
    headers = {"Accept": ACCEPT, "MCP-Protocol-Version": "2026-07-28", "Mcp-Method": body["method"]}  # fmt: skip
    async with client.http.post(client.url, json=body, headers=headers) as response:
        if response.content_type != "text/event-stream":
            return response.status, await response.json(content_type=None)
        async for raw in response.content:
            line = raw.decode().strip()
            if line.startswith("data:"):
                return response.status, _answer(json.loads(line[5:]))
    raise AssertionError("the listen's stream ended without a message")


@pytest.mark.parametrize("caller", ["plain", "gateway"], indirect=True)
async def test_a_listen_naming_a_hidden_resource_is_acknowledged_as_an_unknown_one(
    caller: tuple[Caller, Name],
) -> None:
    client, name = caller
    answers = []
    for token in (HIDDEN, UNKNOWN):
        named = [name("resource", "open"), name("resource", token), name("skill", token) + "/notes/extra.md"]  # fmt: skip
        answers.append(await _acknowledged(client, named))
    _same_but_the_name(*answers)
