"""Refused requests are logged once each at INFO with the reason and the client's address
(at most 20 lines per 10 s, so a flood cannot fill the disk), and every one is counted."""

from __future__ import annotations

import re

import aiohttp
from http_helpers import JSON, call, init
from http_process import HttpProcess
from observe_helpers import scrape, value

TOKEN = "refusal-test-token"
AUTH = {"Authorization": f"Bearer {TOKEN}"}


async def test_each_kind_of_refusal_is_logged_once_with_its_reason() -> None:
    server = HttpProcess("--bearer-token", TOKEN, "--max-body-bytes", "2048")
    try:
        async with aiohttp.ClientSession() as http:
            async with http.post(server.url, json=init(), headers={**JSON, **AUTH, "Origin": "http://evil.example"}) as r:  # fmt: skip
                assert r.status == 403
            gone = {**JSON, **AUTH, "Mcp-Session-Id": "no-such-session", "MCP-Protocol-Version": "2025-06-18"}  # fmt: skip
            async with http.post(server.url, json=call(2, "echo", {"message": "x"}), headers=gone) as r:  # fmt: skip
                assert r.status == 404
            async with http.post(server.url, data="{}", headers={**AUTH, "Content-Type": "text/plain"}) as r:  # fmt: skip
                assert r.status == 415
            async with http.post(server.url, data=b"{" + b" " * 4096 + b"}", headers={**JSON, **AUTH}) as r:  # fmt: skip
                assert r.status == 413
            async with http.get(f"{server.base}/no/such/page", headers=AUTH) as r:
                assert r.status == 404  # not a refusal: nothing logged for it
        for pattern in (
            r"refused POST /mcp from 127\.0\.0\.1: 403 Origin 'http://evil.example' is not allowed",
            r"refused POST /mcp from 127\.0\.0\.1: 404 Session not found",
            r"refused POST /mcp from 127\.0\.0\.1: 415 Unsupported Content-Type 'text/plain'",
            r"refused POST /mcp from 127\.0\.0\.1: 413 Request body over 2048 bytes",
        ):
            line = server.wait_for_line(pattern)
            assert " INFO " in line
            assert len([each for each in server.lines if re.search(pattern, each)]) == 1
        assert not any("/no/such/page" in line for line in server.lines)
        samples = await scrape(f"{server.base}/metrics", AUTH)
        for status in ("403", "404", "413", "415"):
            assert value(samples, "codex_mcp_http_refused_total", status=status) == 1
    finally:
        server.stop()


async def test_a_flood_of_refusals_is_logged_at_most_20_lines_per_window() -> None:
    server = HttpProcess("--bearer-token", TOKEN)
    try:
        async with aiohttp.ClientSession() as http:
            for index in range(30):
                async with http.post(server.url, json=call(index, "echo", {}), headers=JSON) as r:
                    assert r.status == 401
        samples = await scrape(f"{server.base}/metrics", AUTH)
        assert value(samples, "codex_mcp_http_refused_total", status="401") == 30
        logged = [line for line in server.lines if "refused POST /mcp" in line]
        assert len(logged) == 20
        assert all("401 missing bearer token" in line for line in logged)
    finally:
        server.stop()
