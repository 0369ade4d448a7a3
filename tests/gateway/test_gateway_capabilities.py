"""What the gateway tells each child its client can do: a shared child gets what its entry
says, by default what Codex 0.171 declares (elicitation, no sampling, no roots), so it offers
nothing Codex cannot answer; a per-session child gets exactly what its client declared; and a
child's request the client cannot answer gets an error that says so. server-everything
registers its sampling, elicitation and roots tools only for a client that declared them."""

from __future__ import annotations

from pathlib import Path

import pytest
from codex_mcp.client import Client

from .gateway_helpers import (
    EVERYTHING,
    MISSING_NPM,
    gateway,
    launch_http_gateway,
    stdio,
    stop,
    write_config,
)

pytestmark = [
    pytest.mark.interop,
    pytest.mark.skipif(not EVERYTHING.exists(), reason=MISSING_NPM),
]

SAMPLING = "everything__trigger_sampling_request"
ELICITATION = "everything__trigger_elicitation_request"
ROOTS = "everything__get_roots_list"


async def _tools(client: Client) -> set[str]:
    return {tool.name for tool in await client.list_tools(cache=False)}


async def test_a_shared_child_is_told_what_codex_declares(tmp_path: Path) -> None:
    config = write_config(tmp_path, {"everything": stdio(EVERYTHING)})
    async with gateway(config) as client:
        tools = await _tools(client)
    assert ELICITATION in tools
    assert SAMPLING not in tools and ROOTS not in tools, sorted(tools)


async def test_a_shared_child_is_told_what_its_entry_says(tmp_path: Path) -> None:
    entry = stdio(EVERYTHING, client_capabilities={"sampling": {}})
    async with gateway(write_config(tmp_path, {"everything": entry})) as client:
        tools = await _tools(client)
        assert SAMPLING in tools and ELICITATION not in tools, sorted(tools)
        # Our client declared no sampling: the child's question is refused, saying why.
        result = await client.call_tool(SAMPLING, {"prompt": "hi", "maxTokens": 5}, retries=0)
    assert result.is_error, result
    assert "the gateway's client does not support sampling" in result.text, result.text


async def test_a_per_session_child_is_told_what_its_client_declared(tmp_path: Path) -> None:
    config = write_config(tmp_path, {"everything": stdio(EVERYTHING, per_session=True)})
    process, url = launch_http_gateway(config)
    try:
        async with Client.http(url) as plain:  # declares nothing
            tools = await _tools(plain)
            assert not tools & {SAMPLING, ELICITATION, ROOTS}, sorted(tools)
        asking = Client.http(url, roots=[{"uri": "file:///p", "name": "p"}])
        async with asking:
            tools = await _tools(asking)
            assert ROOTS in tools and not tools & {SAMPLING, ELICITATION}, sorted(tools)
    finally:
        stop(process)


URL_ELICITATION = "trigger_url_elicitation"


async def test_passthrough_tells_the_child_every_elicitation_mode(tmp_path: Path) -> None:
    """`codex-mcp -- <server>` starts the child before any client is known, so it is told
    all the gateway can relay, URL elicitation included (server-everything then offers
    its URL elicitation tool, as it does to Codex directly, which declares both modes)."""
    async with gateway(None, "--", str(EVERYTHING)) as client:
        tools = await _tools(client)
    assert URL_ELICITATION in tools, sorted(tools)


async def test_a_url_elicitation_the_client_did_not_declare_is_refused_saying_so(
    tmp_path: Path,
) -> None:
    """A client that declared form elicitation only is never sent a URL elicitation: the
    child's question is refused with the reason, and the call ends with it."""

    async def decline(params: dict[str, object], ctx: object) -> dict[str, object]:
        return {"action": "decline"}

    async with gateway(None, "--", str(EVERYTHING), elicitation_handler=decline) as client:
        arguments = {"url": "https://example.test/sign-in"}
        result = await client.call_tool(URL_ELICITATION, arguments, retries=0)
    assert result.is_error, result
    assert "does not support URL elicitation" in result.text, result.text
