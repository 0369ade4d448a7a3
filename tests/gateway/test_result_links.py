"""A resource a child's tool result links or embeds is named as the gateway serves the
child's resources (`scheme://server/...`), so the front can read what it was given; with
passthrough the child's own URI is kept. Hostile shapes of content pass through untouched."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from codex_mcp.client import Client
from codex_mcp.gateway.relay.calls import outer_links
from codex_mcp.gateway.routing.catalog import outer_uri

from .gateway_helpers import CMD_MCP, EXAMPLES, PY, gateway, gateway_env, stdio, write_config

MODERN = "2026-07-28"


@pytest.mark.parametrize("mode", [None, MODERN])
async def test_a_linked_or_embedded_resource_is_readable_through_the_gateway(
    tmp_path: Path, mode: str | None
) -> None:
    config = write_config(tmp_path, {"kid": stdio(EXAMPLES)})
    options: dict[str, Any] = {} if mode is None else {"mode": mode}
    async with gateway(config, **options) as client:
        linked = await client.call_tool("kid__resource_link_example", {}, retries=0)
        link = linked.content[0]
        assert link["uri"] == "test://kid/static-text", link
        assert "static" in str(await client.read_resource(link["uri"]))
        embedded = await client.call_tool("kid__test_embedded_resource", {}, retries=0)
        assert embedded.content[0]["resource"]["uri"] == "test://kid/embedded-resource"


async def test_passthrough_keeps_the_childs_uris(tmp_path: Path) -> None:
    argv = [PY, CMD_MCP, "--", *EXAMPLES]
    async with Client.stdio(argv, env=gateway_env(None), timeout=30) as client:
        linked = await client.call_tool("resource_link_example", {}, retries=0)
        assert linked.content[0]["uri"] == "test://static-text"
        assert "static" in str(await client.read_resource("test://static-text"))


def _outer(uri: str) -> str:
    return outer_uri("kid", uri)


@pytest.mark.parametrize(
    "content",
    [
        None,
        "text",
        [None, 1, "x", []],
        [{"type": "resource_link"}],  # no uri
        [{"type": "resource_link", "uri": 7}],
        [{"type": "resource", "resource": "not an object"}],
        [{"type": "resource", "resource": {"uri": ["a"]}}],
        [{"type": ["resource_link"], "uri": "test://x"}],  # unhashable type
        [{"type": "text", "text": "test://x", "uri": "test://x"}],  # not a link
    ],
)
def test_hostile_content_is_left_as_it_came(content: Any) -> None:
    result = {"content": content}
    before = repr(result)
    outer_links(result, _outer)
    assert repr(result) == before


def test_links_and_embedded_resources_are_renamed() -> None:
    result: dict[str, Any] = {
        "content": [
            {"type": "resource_link", "uri": "file:///tmp/a", "name": "a"},
            {"type": "resource", "resource": {"uri": "mem://b", "text": "b"}},
            {"type": "text", "text": "file:///tmp/a"},
        ]
    }
    outer_links(result, _outer)
    assert result["content"][0]["uri"] == outer_uri("kid", "file:///tmp/a")
    assert result["content"][1]["resource"]["uri"] == "mem://kid/b"
    assert result["content"][2]["text"] == "file:///tmp/a"
