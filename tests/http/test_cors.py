"""CORS for browser clients (`--cors-origin`): off by default, an allow-list, the Host and
Origin checks unchanged; and a real headless Chromium calling the server from a page of
an allowed origin, and refused from another (specs/oauth.md, "CORS")."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web
from aiohttp.test_utils import TestServer
from browser import chromium, needs_chromium
from http_helpers import JSON, init
from http_process import HttpProcess, MakeClient

ALLOWED = "https://app.example.com"
PREFLIGHT = {
    "Origin": ALLOWED,
    "Access-Control-Request-Method": "POST",
    "Access-Control-Request-Headers": "authorization, content-type, mcp-protocol-version",
}


async def test_cors_is_off_by_default(make_client: MakeClient) -> None:
    client = await make_client()
    async with client.options(
        "/mcp", headers={**PREFLIGHT, "Origin": "http://127.0.0.1:9"}
    ) as reply:
        assert reply.status == 405
        assert "Access-Control-Allow-Origin" not in reply.headers
    async with client.post(
        "/mcp", json=init(), headers={**JSON, "Origin": "http://127.0.0.1:9"}
    ) as reply:
        assert reply.status == 200  # a loopback page passes the Origin check, as before
        assert "Access-Control-Allow-Origin" not in reply.headers


async def test_an_allowed_origin_gets_preflight_and_exposed_headers(
    make_client: MakeClient,
) -> None:
    client = await make_client(cors_origin=[ALLOWED], bearer_tokens=["t"])
    async with client.options("/mcp", headers=PREFLIGHT) as reply:
        assert reply.status == 204
        assert reply.headers["Access-Control-Allow-Origin"] == ALLOWED
        assert set(reply.headers["Access-Control-Allow-Methods"].split(", ")) == {
            "GET",
            "POST",
            "DELETE",
        }
        assert (
            reply.headers["Access-Control-Allow-Headers"]
            == PREFLIGHT["Access-Control-Request-Headers"]
        )
        assert "Origin" in reply.headers["Vary"]
    headers = {**JSON, "Origin": ALLOWED, "Authorization": "Bearer t"}
    async with client.post("/mcp", json=init(), headers=headers) as reply:
        assert reply.status == 200
        assert reply.headers["Access-Control-Allow-Origin"] == ALLOWED
        exposed = reply.headers["Access-Control-Expose-Headers"]
        assert "Mcp-Session-Id" in exposed and "WWW-Authenticate" in exposed
        assert reply.headers["Mcp-Session-Id"]
    # A refusal carries them too, so the page can read the challenge.
    async with client.post("/mcp", json=init(), headers={**JSON, "Origin": ALLOWED}) as reply:
        assert reply.status == 401
        assert reply.headers["Access-Control-Allow-Origin"] == ALLOWED
        assert "WWW-Authenticate" in reply.headers


async def test_nothing_is_loosened_for_an_origin_not_listed(make_client: MakeClient) -> None:
    client = await make_client(cors_origin=[ALLOWED])
    for origin in (
        "http://127.0.0.1:9",
        "https://evil.example.com",
        "https://app.example.com.evil.io",
    ):
        async with client.options("/mcp", headers={**PREFLIGHT, "Origin": origin}) as reply:
            assert reply.status == 403, origin
            assert "Access-Control-Allow-Origin" not in reply.headers
    async with client.post(
        "/mcp", json=init(), headers={**JSON, "Origin": "http://127.0.0.1:9"}
    ) as reply:
        assert reply.status == 200  # the Origin check as before: loopback passes...
        assert "Access-Control-Allow-Origin" not in reply.headers  # ...but gets no CORS
    async with client.post(
        "/mcp", json=init(), headers={**JSON, "Origin": "https://evil.example.com"}
    ) as reply:
        assert reply.status == 403
        assert "Access-Control-Allow-Origin" not in reply.headers
    # DNS rebinding: a listed origin does not make a foreign Host pass.
    async with client.options("/mcp", headers={**PREFLIGHT, "Host": "evil.example.com"}) as reply:
        assert reply.status == 403
        assert "Access-Control-Allow-Origin" not in reply.headers


PAGE = """<!doctype html><title>cors</title><p id="out">waiting</p>"""

#: What the page runs: an MCP initialize and a tools/call, reading the session id the
#: server sends (readable only when exposed), as a browser MCP client would.
CALL = """async ([url, token]) => {
  const headers = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream",
                   "Authorization": `Bearer ${token}`, "MCP-Protocol-Version": "2025-06-18"};
  try {
    const init = await fetch(url, {method: "POST", headers, body: JSON.stringify(
      {jsonrpc: "2.0", id: 1, method: "initialize", params: {protocolVersion: "2025-06-18",
       capabilities: {}, clientInfo: {name: "page", version: "1"}}})});
    const session = init.headers.get("Mcp-Session-Id");
    if (!session) return {error: "no readable Mcp-Session-Id"};
    const call = await fetch(url, {method: "POST", headers: {...headers, "Mcp-Session-Id": session},
      body: JSON.stringify({jsonrpc: "2.0", id: 2, method: "tools/call",
                            params: {name: "echo", arguments: {message: "from the page"}}})});
    return {status: call.status, body: await call.json()};
  } catch (error) {
    return {error: String(error)};
  }
}"""


@needs_chromium
@pytest.mark.slow
async def test_a_browser_page_calls_from_an_allowed_origin_and_not_from_another(
    http_process: Callable[..., HttpProcess], tmp_path: Path
) -> None:
    async def page(request: web.Request) -> web.Response:
        return web.Response(text=PAGE, content_type="text/html")

    def page_app() -> web.Application:
        app = web.Application()
        app.router.add_get("/", page)
        return app

    async with (
        TestServer(page_app(), host="127.0.0.1") as allowed,
        TestServer(page_app(), host="127.0.0.1") as other,
    ):
        allowed_origin = str(allowed.make_url("/")).rstrip("/")
        audit = tmp_path / "audit.jsonl"
        server = http_process(
            "--cors-origin",
            allowed_origin,
            "--bearer-token",
            "page-token",
            "--audit-log",
            str(audit),
        )
        async with chromium() as browser:
            results: dict[str, Any] = {}
            for name, origin in (("allowed", allowed), ("other", other)):
                tab = await browser.new_page()
                await tab.goto(str(origin.make_url("/")))
                results[name] = await tab.evaluate(CALL, [server.url, "page-token"])
    assert results["allowed"]["status"] == 200, results
    assert results["allowed"]["body"]["result"]["content"][0]["text"] == "from the page"
    # The other page's preflight is refused: the browser never sends its call.
    assert "Failed to fetch" in results["other"].get("error", ""), json.dumps(results)
    calls = [json.loads(line) for line in audit.read_text().splitlines()]
    assert [call.get("tool") for call in calls if "tool" in call] == [
        "echo"
    ]  # the allowed page's only
