"""The older HTTP entries under the policy (specs/policy.md, "Enforcement"): the
2024-11-05 HTTP+SSE transport (`GET /sse`, `POST /messages`) and single-event SSE
(`GET /mcp/sse?request=...`, with a session and without) reach the same core as
Streamable HTTP, so what the policy hides is not listed there and its use is refused,
by the served name and the child's raw name alike. Real processes on 127.0.0.1:
`codex-mcp-http` serving the child, and a gateway of it; our legacy SSE client and raw
aiohttp requests."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Iterator
from typing import Any

import aiohttp
import pytest
from codex_mcp.client import Client, McpError
from support.polling import until
from support.processes import HttpProcess

from .policy_helpers import Caller, answer, called, gateway_server, plain_server, write_policy

HIDING = {
    "default": "allow",
    "rules": [
        {"effect": "deny", "kind": "tool", "tool": "rm"},
        {"effect": "deny", "kind": "resource", "tool": "mem://secret"},
        {"effect": "deny", "kind": "prompt", "tool": "secret_*"},
    ],
}


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, HttpProcess]]:
    directory = tmp_path_factory.mktemp("older-entries")
    policy = write_policy(directory, HIDING)
    plain = plain_server(policy)
    try:
        gateway = gateway_server(directory, policy, {"kid": {}})
    except BaseException:
        plain.stop()
        raise
    yield {"plain": plain, "gateway": gateway}
    plain.stop()
    gateway.stop()


@pytest.fixture
async def http() -> AsyncIterator[aiohttp.ClientSession]:
    async with aiohttp.ClientSession() as session:
        yield session


def names(kind: str) -> dict[str, Any]:
    gateway = kind == "gateway"
    return {
        "prefix": "kid__" if gateway else "",
        "hidden_tools": ["kid__rm", "rm", "KID__RM"] if gateway else ["rm", "RM", "kid__rm"],
        "secret": ["mem://kid/secret", "mem://secret"] if gateway else ["mem://secret"],
        "prompt": ["kid__secret_prompt", "secret_prompt"] if gateway else ["secret_prompt"],
    }


async def _up(server: HttpProcess, http: aiohttp.ClientSession, kind: str) -> None:
    """Behind the gateway the child starts in the background: wait for its tools."""
    if kind == "gateway":
        caller = await Caller(http, server.url).open()

        async def listed() -> bool:
            return "kid__get_time" in await caller.listed("tools")

        await until(listed, 30, "the gateway's child listed")


@pytest.mark.parametrize("kind", ["plain", "gateway"])
async def test_the_legacy_sse_transport_hides_and_refuses_alike(
    served: dict[str, HttpProcess], http: aiohttp.ClientSession, kind: str
) -> None:
    server, n = served[kind], names(kind)
    await _up(server, http, kind)
    async with Client.sse(f"{server.base}/sse", timeout=30) as client:
        tools = [tool["name"] for tool in (await client.request("tools/list", {}))["tools"]]
        assert f"{n['prefix']}get_time" in tools, tools
        assert not [t for t in tools if t.lower().endswith("rm")], tools
        resources = [r["uri"] for r in (await client.request("resources/list", {}))["resources"]]
        assert resources and not [r for r in resources if "secret" in r], resources
        prompts = [p["name"] for p in (await client.request("prompts/list", {}))["prompts"]]
        assert prompts and not [p for p in prompts if "secret" in p], prompts

        for name in n["hidden_tools"]:
            with pytest.raises(McpError) as refused:
                await client.request("tools/call", {"name": name, "arguments": {}})
            assert "called rm" not in str(refused.value), refused.value
            with pytest.raises(McpError):  # a direct method: the tool's name as the method
                await client.request(name, {})
        for uri in n["secret"]:
            with pytest.raises(McpError) as refused:
                await client.request("resources/read", {"uri": uri})
            assert "secret note" not in str(refused.value)
        for prompt in n["prompt"]:
            with pytest.raises(McpError):
                await client.request("prompts/get", {"name": prompt})
        # What is listed answers on the same transport.
        reply = await client.request("tools/call", {"name": f"{n['prefix']}get_time"})
        assert called({"result": reply}, "get_time"), reply


async def _single_event(
    http: aiohttp.ClientSession,
    server: HttpProcess,
    method: str,
    params: dict[str, Any],
    session: dict[str, str],
) -> dict[str, Any]:
    request = {"jsonrpc": "2.0", "id": 7, "method": method, "params": params}
    headers = {"Accept": "text/event-stream", **session}
    headers.pop("Content-Type", None)
    async with http.get(
        f"{server.url}/sse", params={"request": json.dumps(request)}, headers=headers
    ) as response:
        assert response.status == 200, (response.status, await response.text())
        assert response.content_type == "text/event-stream", response.content_type
        return await answer(response)


@pytest.mark.parametrize("with_session", [False, True])
@pytest.mark.parametrize("kind", ["plain", "gateway"])
async def test_single_event_sse_hides_and_refuses_alike(
    served: dict[str, HttpProcess], http: aiohttp.ClientSession, kind: str, with_session: bool
) -> None:
    server, n = served[kind], names(kind)
    await _up(server, http, kind)
    session = (await Caller(http, server.url).open()).headers if with_session else {}

    async def ask(method: str, params: dict[str, Any]) -> dict[str, Any]:
        return await _single_event(http, server, method, params, session)

    listed = await ask("tools/list", {})
    tools = [tool["name"] for tool in listed["result"]["tools"]]
    assert f"{n['prefix']}get_time" in tools, tools
    assert not [t for t in tools if t.lower().endswith("rm")], tools
    for name in n["hidden_tools"]:
        reply = await ask("tools/call", {"name": name, "arguments": {}})
        assert "error" in reply and not called(reply, "rm"), (name, reply)
    for uri in n["secret"]:
        reply = await ask("resources/read", {"uri": uri})
        assert "error" in reply and "secret note" not in str(reply), (uri, reply)
    for prompt in n["prompt"]:
        reply = await ask("prompts/get", {"name": prompt})
        assert "error" in reply and "the secret prompt" not in str(reply), (prompt, reply)
    reply = await ask("tools/call", {"name": f"{n['prefix']}get_time", "arguments": {}})
    assert called(reply, "get_time"), reply
