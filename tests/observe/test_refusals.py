"""Refused requests are logged once each at INFO with the reason and the client's address
(at most 20 lines per 10 s, so a flood cannot fill the disk), and every one is counted by
its status and reason (a bounded set: observe/refusals.py, REASONS)."""

from __future__ import annotations

import re

import aiohttp
from http_helpers import JSON, call, init
from http_process import HttpProcess
from observe_helpers import scrape, value

TOKEN = "refusal-test-token"
AUTH = {"Authorization": f"Bearer {TOKEN}"}


async def test_each_kind_of_refusal_is_logged_once_with_its_reason() -> None:
    server = HttpProcess(
        "--bearer-token", TOKEN, "--max-body-bytes", "2048", "--auth-failures-per-minute", "2"
    )
    try:
        async with aiohttp.ClientSession() as http:
            async with http.post(server.url, json=init(), headers={**JSON, **AUTH, "Origin": "http://evil.example"}) as r:  # fmt: skip
                assert r.status == 403
            async with http.post(server.url, json=init(), headers={**JSON, **AUTH, "Host": "evil.example"}) as r:  # fmt: skip
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
        guesser = aiohttp.TCPConnector(local_addr=("127.0.0.2", 0))  # another client
        async with aiohttp.ClientSession(connector=guesser) as http:
            for expected in (401, 401, 429):  # two wrong tokens, then no verdict
                async with http.post(server.url, json=init(), headers={**JSON, "Authorization": "Bearer wrong"}) as r:  # fmt: skip
                    assert r.status == expected
        for pattern in (
            r"refused POST /mcp from 127\.0\.0\.1: 403 Origin 'http://evil.example' is not allowed",
            r"refused POST /mcp from 127\.0\.0\.1: 404 Session not found",
            r"refused POST /mcp from 127\.0\.0\.1: 415 Unsupported Content-Type 'text/plain'",
            r"refused POST /mcp from 127\.0\.0\.1: 413 Request body over 2048 bytes",
            r"refused POST /mcp from 127\.0\.0\.1: 403 Host header 'evil.example' is not allowed",
            r"refused POST /mcp from 127\.0\.0\.2: 429 Too many failed credentials from this address",
        ):
            line = server.wait_for_line(pattern)
            assert " INFO " in line
            assert len([each for each in server.lines if re.search(pattern, each)]) == 1
        assert not any("/no/such/page" in line for line in server.lines)
        samples = await scrape(f"{server.base}/metrics", AUTH)
        for status, reason, count in (
            ("403", "origin", 1),
            ("403", "host", 1),
            ("404", "session", 1),
            ("413", "too_large", 1),
            ("415", "content_type", 1),
            ("401", "wrong_credential", 2),
            ("429", "guessing", 1),
        ):
            refused = value(samples, "codex_mcp_http_refused_total", status=status, reason=reason)
            assert refused == count, (status, reason)
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
        refused = value(
            samples, "codex_mcp_http_refused_total", status="401", reason="no_credential"
        )
        assert refused == 30
        logged = [line for line in server.lines if "refused POST /mcp" in line]
        assert len(logged) == 20
        assert all("401 missing bearer token" in line for line in logged)
    finally:
        server.stop()
