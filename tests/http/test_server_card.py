"""The server card of a real `codex-mcp-http --server-card` and of a gateway served over
HTTP: valid against the extension's published JSON Schema, consistent with what the live
server says (name, version, every protocol version it lists), and read by our client
(specs/http.md, "The server card").

`server_card.schema.json` is the extension's generated schema, byte for byte:
modelcontextprotocol/experimental-ext-server-card, `schema.json` as of commit
8924e08682b4a936e6464b57845ec2ff17dc8776 (2026-07-24; the file last changed in
92999cb3f5d82e648385cb92ce41ed9aa1386eda), Apache-2.0. Its source of truth is `schema.ts`."""

from __future__ import annotations

import hashlib
import json
import os
import sys
from pathlib import Path
from typing import Any

import aiohttp
import jsonschema
import pytest
from codex_mcp.client import Client, fetch_server_card, server_card_url
from codex_mcp.core.server_card import MEDIA_TYPE, SCHEMA_URL
from codex_mcp.core.versions import STATELESS_VERSIONS, SUPPORTED_VERSIONS
from http_process import ROOT, HttpProcess

SCHEMA_FILE = Path(__file__).parent / "server_card.schema.json"
SCHEMA_SHA256 = "2c772b51edb367f154771d84ddbae87ddba00a624422c8e46f218a9ac03bf042"
SERVER = str(ROOT / "tests/stdio/servers/progressing.py")


def validator() -> jsonschema.Draft202012Validator:
    schema = json.loads(SCHEMA_FILE.read_text())
    return jsonschema.Draft202012Validator(
        {**schema, "$ref": "#/$defs/ServerCard"},
        format_checker=jsonschema.Draft202012Validator.FORMAT_CHECKER,
    )


def test_the_schema_is_the_published_one_and_not_vacuous() -> None:
    assert hashlib.sha256(SCHEMA_FILE.read_bytes()).hexdigest() == SCHEMA_SHA256
    check = validator()
    minimal = {"$schema": SCHEMA_URL, "name": "a.b/c", "version": "1", "description": "d"}
    assert check.is_valid(minimal)
    for broken in (
        {k: v for k, v in minimal.items() if k != "name"},
        {**minimal, "name": "no-namespace"},
        {**minimal, "$schema": "https://example.com/x.json"},
        {**minimal, "description": "d" * 101},
        {**minimal, "remotes": [{"type": "stdio", "url": "https://x"}]},
    ):
        assert not check.is_valid(broken), broken


async def _get_card(url: str, **headers: str) -> tuple[aiohttp.ClientResponse, Any]:
    async with aiohttp.ClientSession() as http, http.get(url, headers=headers) as reply:
        body = await reply.read()
        return reply, json.loads(body) if reply.status == 200 else body


async def test_codex_mcp_http_serves_a_valid_card_true_to_the_live_server() -> None:
    server = HttpProcess("--server-card", "--serve", SERVER)
    try:
        reply, card = await _get_card(server_card_url(server.url), Accept=MEDIA_TYPE)
        assert reply.status == 200 and reply.content_type == MEDIA_TYPE
        errors = [e.message for e in validator().iter_errors(card)]
        assert not errors, errors
        assert card["remotes"][0]["url"] == server.url
        assert "tools" not in card and "count" not in json.dumps(card)
        fetched = await fetch_server_card(server_card_url(server.url))
        assert fetched.document == card
        versions = card["remotes"][0]["supportedProtocolVersions"]
        assert versions == [*STATELESS_VERSIONS, *SUPPORTED_VERSIONS]
        for version in SUPPORTED_VERSIONS:
            async with Client.http(card["remotes"][0]["url"], protocol_version=version) as client:
                assert client.protocol_version == version
                assert card["name"].endswith("/" + client.server_info["name"])
                assert card["version"] == client.server_info["version"]
        for version in STATELESS_VERSIONS:
            async with Client.http(card["remotes"][0]["url"], mode=version) as client:
                assert client.protocol_version == version
                assert [tool.name for tool in await client.list_tools()] == ["count"]
    finally:
        server.stop()


async def test_off_by_default_in_codex_mcp_http() -> None:
    server = HttpProcess("--serve", SERVER)
    try:
        reply, _ = await _get_card(server_card_url(server.url))
        assert reply.status == 404
    finally:
        server.stop()


async def test_the_gateway_card_describes_the_gateway_not_its_children(tmp_path: Path) -> None:
    config = tmp_path / ".mcp.json"
    child = {"command": sys.executable, "args": [str(ROOT / "cmd/mcp"), "--serve", SERVER]}
    config.write_text(json.dumps({"mcpServers": {"counter": child}}))
    env = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith(("WRAPPER_", "MCP_WRAPPER_", "CODEX_MCP_"))
    }
    env["CODEX_MCP_WRAPPER_CONFIG"] = str(config)
    env["CODEX_MCP_SERVER_CARD"] = "true"  # the setting from the environment, too
    server = HttpProcess(env=env)
    try:
        reply, card = await _get_card(server_card_url(server.url))
        assert reply.status == 200, card
        assert validator().is_valid(card), card
        async with Client.http(server.url) as client:
            assert card["name"].endswith("/" + client.server_info["name"])
            tools = [tool.name for tool in await client.list_tools()]
        assert any("count" in name for name in tools), tools  # the child is served...
        text = json.dumps(card)
        assert "counter" not in text and "count" not in text  # ...and not on the card
        assert "progressing" not in text
    finally:
        server.stop()


@pytest.mark.parametrize("base_path", ["/tools", "/a/b/"])
async def test_the_card_follows_the_base_path(base_path: str) -> None:
    server = HttpProcess("--server-card", "--base-path", base_path, "--serve", SERVER)
    try:
        card = await fetch_server_card(server_card_url(server.url))
        assert card.remotes[0].url == server.url
        assert "/" + base_path.strip("/") + "/mcp" in server.url
    finally:
        server.stop()
