"""The status page at / in a real headless Chromium: it renders, shows a live session and
a gateway child that is down, reloads itself (a session opened meanwhile appears without
our reloading it), and needs the bearer token. The screenshot stays in the test's tmp
directory (pytest keeps the last runs)."""

from __future__ import annotations

import os
from pathlib import Path

import aiohttp
import pytest
from browser import chromium, needs_chromium
from http_helpers import JSON, init, open_session
from http_process import HttpProcess
from observe_helpers import gateway_config

TOKEN = "status-page-token"
AUTH = {"Authorization": f"Bearer {TOKEN}"}


@needs_chromium
@pytest.mark.slow
async def test_the_status_page_shows_sessions_and_a_child_that_is_down(tmp_path: Path) -> None:
    env = {**os.environ, "CODEX_MCP_WRAPPER_CONFIG": str(gateway_config(tmp_path))}
    server = HttpProcess("--bearer-token", TOKEN, env=env)
    try:
        async with aiohttp.ClientSession() as http:
            await open_session(http, server.url, **AUTH)
            async with http.get(f"{server.base}/") as refused:
                assert refused.status == 401  # behind the token, like /mcp
            async with chromium(headers=AUTH) as browser:
                page = await browser.new_page()
                response = await page.goto(f"{server.base}/")
                assert response is not None and response.status == 200
                assert "codex-mcp status" in await page.title()
                assert await page.inner_text('[data-test="version"] b') == "0.1.0"
                assert await page.locator('[data-test="session"]').count() == 1
                up = page.locator('[data-test="child"][data-child="up"]')
                await up.wait_for()
                assert await up.get_attribute("data-state") == "ready"
                down = page.locator('[data-test="child"][data-child="down"]')
                assert await down.get_attribute("data-state") in (
                    "restarting",
                    "failed",
                    "not found",
                )
                assert "no such file" in await down.inner_text()  # its command's path
                await page.screenshot(path=str(tmp_path / "status-page.png"), full_page=True)

                await open_session(http, server.url, **AUTH)  # the page reloads by itself
                # A locator, not wait_for_function: the page's policy forbids eval.
                await page.locator('[data-test="session"]').nth(1).wait_for(timeout=20_000)
                assert await page.inner_text('[data-test="sessions"] b') == "2"
    finally:
        server.stop()
    shot = tmp_path / "status-page.png"
    assert shot.stat().st_size > 10_000
    print(f"status page screenshot: {shot}")


@pytest.mark.slow  # a real chromium
@needs_chromium
async def test_a_browser_logs_in_with_the_token_and_sees_the_page(tmp_path: Path) -> None:
    """No header: the browser gets our login form, refuses a wrong token, takes the right
    one, and shows the page; its cookie is HttpOnly, SameSite=Strict, and opens no /mcp."""
    server = HttpProcess("--bearer-token", TOKEN)
    try:
        async with chromium() as browser:
            page = await browser.new_page()
            refused = await page.goto(f"{server.base}/")
            assert refused is not None and refused.status == 401
            assert await page.locator('[data-test="version"]').count() == 0
            await page.fill('input[name="token"]', "not-the-token")
            async with page.expect_navigation():
                await page.click('input[type="submit"]')
            assert "not accepted" in await page.inner_text('[data-test="said"]')
            assert await browser.cookies() == []

            await page.fill('input[name="token"]', TOKEN)
            async with page.expect_navigation():
                await page.click('input[type="submit"]')
            assert page.url == f"{server.base}/"
            assert "codex-mcp status" in await page.title()
            assert await page.inner_text('[data-test="version"] b') == "0.1.0"
            (cookie,) = await browser.cookies()
            assert cookie["httpOnly"] and cookie["sameSite"] == "Strict"
            assert TOKEN not in cookie["value"]
            reloaded = await page.reload()  # the page's own refresh keeps it open
            assert reloaded is not None and reloaded.status == 200
            await page.screenshot(path=str(tmp_path / "logged-in.png"), full_page=True)

            # The browser's cookie goes with a request to /mcp too: it opens nothing there.
            mcp = await browser.request.post(
                server.url, data=init(), headers={**JSON, "Origin": server.base}
            )
            assert mcp.status == 401
            metrics = await browser.request.get(f"{server.base}/metrics")
            assert metrics.status == 200
    finally:
        server.stop()
    assert (tmp_path / "logged-in.png").stat().st_size > 5_000
