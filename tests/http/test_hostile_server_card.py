"""The server card's route under hostile requests: it is public, so it must open nothing
else (no second way into /mcp, no credential, session or tool in it), name only a URL the
Host check let through, stay off unless asked, and stay valid whatever the server calls
itself (specs/http.md, "The server card")."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from codex_mcp import Server
from codex_mcp.core.server_card import MEDIA_TYPE
from http_helpers import JSON, build_test_server, init
from http_process import MakeClient

CARD = "/mcp/server-card"
SCHEMA = json.loads((Path(__file__).parent / "server_card.schema.json").read_text())
VALIDATOR = jsonschema.Draft202012Validator(
    {**SCHEMA, "$ref": "#/$defs/ServerCard"},
    format_checker=jsonschema.Draft202012Validator.FORMAT_CHECKER,
)


def assert_valid(card: Any) -> None:
    errors = [error.message for error in VALIDATOR.iter_errors(card)]
    assert not errors, errors


async def test_no_card_unless_asked(make_client: MakeClient) -> None:
    client = await make_client()
    async with client.get(CARD) as reply:
        assert reply.status == 404
        assert reply.content_type != MEDIA_TYPE


async def test_the_card_needs_no_credential_but_mcp_still_does(make_client: MakeClient) -> None:
    client = await make_client(server_card=True, bearer_tokens=["s3cret-token"])
    async with client.get(CARD) as reply:
        assert reply.status == 200
        assert reply.content_type == MEDIA_TYPE
        text = await reply.text()
    assert "s3cret-token" not in text
    card = json.loads(text)
    assert_valid(card)
    # The card says a token is needed, never which.
    assert card["remotes"][0]["headers"][0]["name"] == "Authorization"
    assert card["remotes"][0]["headers"][0]["isSecret"] is True
    async with client.post("/mcp", json=init(), headers=JSON) as reply:
        assert reply.status == 401


@pytest.mark.parametrize(
    "path",
    [
        "/mcp/server-card/",
        "/mcp/server-card/../",
        "/mcp/server-card/..%2f",
        "/mcp/server-card%2f..",
        "/mcp/server-card/x",
        "/MCP/server-card",
        "/mcp//server-card",
    ],
)
async def test_no_other_path_passes_as_the_card(make_client: MakeClient, path: str) -> None:
    client = await make_client(server_card=True, bearer_tokens=["s3cret-token"])
    async with client.get(path) as reply:
        assert reply.status in (401, 404), (path, reply.status)
        assert reply.content_type != MEDIA_TYPE


async def test_a_post_to_the_card_reaches_no_mcp_method(make_client: MakeClient) -> None:
    client = await make_client(server_card=True, bearer_tokens=["s3cret-token"])
    async with client.post(CARD, json=init(), headers=JSON) as reply:
        assert reply.status in (401, 405)
        assert "serverInfo" not in await reply.text()
    for method in ("PUT", "DELETE", "PATCH"):
        async with client.request(method, CARD) as reply:
            assert reply.status in (401, 405), method


async def test_a_foreign_host_is_refused_not_reflected(make_client: MakeClient) -> None:
    client = await make_client(server_card=True)
    async with client.get(CARD, headers={"Host": "evil.example"}) as reply:
        assert reply.status == 403
        assert "evil.example" not in (await reply.text()).replace("'evil.example'", "")
    # An X-Forwarded-Host from a proxy nobody listed is ignored: the card names the Host.
    async with client.get(
        CARD, headers={"X-Forwarded-Host": "evil.example", "X-Forwarded-Proto": "https"}
    ) as reply:
        assert reply.status == 200
        card = await reply.json(content_type=MEDIA_TYPE)
    url = card["remotes"][0]["url"]
    assert url.startswith("http://127.0.0.1:") and url.endswith("/mcp")
    assert "evil" not in json.dumps(card)


async def test_a_listed_proxy_names_the_public_url(make_client: MakeClient) -> None:
    client = await make_client(
        server_card=True, forwarded_hosts=["mcp.example.com"], base_path="/tools"
    )
    headers = {"X-Forwarded-Host": "mcp.example.com", "X-Forwarded-Proto": "https"}
    async with client.get("/tools" + CARD, headers=headers) as reply:
        assert reply.status == 200
        card = await reply.json(content_type=MEDIA_TYPE)
    assert_valid(card)
    assert card["remotes"][0]["url"] == "https://mcp.example.com/tools/mcp"
    assert card["name"] == "com.example.mcp/http-tests"
    async with client.get(CARD, headers=headers) as reply:
        assert reply.status == 404  # outside the base path


async def test_a_cross_origin_page_may_read_it(make_client: MakeClient) -> None:
    client = await make_client(server_card=True)
    async with client.get(CARD, headers={"Origin": "https://elsewhere.example"}) as reply:
        assert reply.status == 200
        assert reply.headers["Access-Control-Allow-Origin"] == "*"
        assert "ETag" in reply.headers["Access-Control-Expose-Headers"]
    # ... and nothing more: /mcp keeps its Origin check.
    async with client.post(
        "/mcp", json=init(), headers={**JSON, "Origin": "https://elsewhere.example"}
    ) as reply:
        assert reply.status == 403


@pytest.mark.parametrize(
    "if_none_match",
    ["", "*garbage*", "W/", '"' + "a" * 100_000 + '"', ",,,,", "W/" * 3000, '"\xe9"'],
)
async def test_odd_if_none_match_gets_the_card(make_client: MakeClient, if_none_match: str) -> None:
    client = await make_client(server_card=True)
    async with client.get(CARD, headers={"If-None-Match": if_none_match}) as reply:
        assert reply.status in (200, 400, 431), reply.status
        if reply.status == 200:
            assert_valid(await reply.json(content_type=MEDIA_TYPE))


async def test_etag_revalidation(make_client: MakeClient) -> None:
    client = await make_client(server_card=True)
    async with client.get(CARD) as reply:
        etag = reply.headers["ETag"]
        assert reply.headers["Cache-Control"] == "public, max-age=3600"
    async with client.get(CARD, headers={"If-None-Match": f'"other", W/{etag}'}) as reply:
        assert reply.status == 304
        assert await reply.read() == b""
    async with client.get(CARD, headers={"If-None-Match": '"other"'}) as reply:
        assert reply.status == 200


HOSTILE_NAMES = [
    ("x", None),
    ("a/b/c", "de\u0301scription\n\twith\x00control"),
    ("名前 with spaces", "d" * 10_000),
    ("-" * 500, " \n "),
    ("ok.name/leaf", ""),
]


@pytest.mark.parametrize(("name", "instructions"), HOSTILE_NAMES)
async def test_the_card_is_valid_whatever_the_server_calls_itself(
    make_client: MakeClient, name: str, instructions: str | None
) -> None:
    icons: list[Any] = [
        {"src": "https://example.com/i.png", "sizes": ["48x48"], "theme": "dark", "x": 1},
        {"src": "javascript:alert(1)"},
        {"src": 7},
        "not an icon",
        {"src": "data:image/png;base64,AAAA", "sizes": [48], "theme": "neon", "mimeType": 3},
    ]
    server = Server(
        name,
        "1" * 400,
        title="t" * 500,
        instructions=instructions,
        icons=icons,
        website_url="not a url",
    )
    client = await make_client(core=server.core, server_card=True)
    async with client.get(CARD) as reply:
        card = await reply.json(content_type=MEDIA_TYPE)
    assert_valid(card)
    assert "tools" not in card and "websiteUrl" not in card
    assert card["icons"] == [
        {"src": "https://example.com/i.png", "sizes": ["48x48"], "theme": "dark"},
        {"src": "data:image/png;base64,AAAA"},
    ]


async def test_the_card_shows_nothing_of_sessions_or_tools(make_client: MakeClient) -> None:
    client = await make_client(server_card=True)
    async with client.get(CARD) as reply:
        before = await reply.read()
    async with client.post("/mcp", json=init(), headers=JSON) as reply:
        session = reply.headers["Mcp-Session-Id"]
    async with client.get(CARD) as reply:
        after = await reply.read()
    assert before == after
    assert session.encode() not in after
    assert b"echo" not in after
    assert build_test_server().core.server_info["name"] == "http-tests"
