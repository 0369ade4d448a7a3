"""The browser driver the page tests use: a real Chromium loads a page from a real server
on 127.0.0.1, sends the headers it is given, runs the page's script, and screenshots it."""

from __future__ import annotations

from pathlib import Path

import pytest
from aiohttp import web
from aiohttp.test_utils import TestServer
from browser import chromium, needs_chromium

PAGE = """<!doctype html><title>t</title><p id="said">{said}</p>
<p id="ran"></p><script>document.getElementById("ran").textContent = "script ran";</script>"""


@pytest.mark.slow
@needs_chromium
async def test_chromium_loads_a_page_with_our_headers_and_screenshots_it(tmp_path: Path) -> None:
    async def page(request: web.Request) -> web.Response:
        said = request.headers.get("Authorization", "no header")
        return web.Response(text=PAGE.format(said=said), content_type="text/html")

    app = web.Application()
    app.router.add_get("/", page)
    async with (
        TestServer(app, host="127.0.0.1") as server,
        chromium(headers={"Authorization": "Bearer seen"}) as browser,
    ):
        tab = await browser.new_page()
        await tab.goto(str(server.make_url("/")))
        assert await tab.inner_text("#said") == "Bearer seen"
        await tab.wait_for_function("document.getElementById('ran').textContent !== ''")
        assert await tab.inner_text("#ran") == "script ran"
        shot = tmp_path / "page.png"
        await tab.screenshot(path=str(shot))
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
