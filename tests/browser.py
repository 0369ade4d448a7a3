"""A real headless Chromium for tests: Debian's `chromium` (scripts/setup.sh installs it),
driven by Playwright over the DevTools protocol; Playwright's own browser downloads are
never used.

    async with chromium(headers={"Authorization": "Bearer t"}) as browser:
        page = await browser.new_page()
        await page.goto(url)

Each launch gets a fresh profile directory and no background traffic (no sync, updates,
first-run pages), so a run leaves nothing behind and talks to nothing but the test's
servers.
"""

from __future__ import annotations

import contextlib
import shutil
import tempfile
from collections.abc import AsyncIterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from playwright.async_api import BrowserContext

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
FLAGS = [
    "--no-sandbox",  # tests run as root in containers, where the sandbox cannot start
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]

needs_chromium = pytest.mark.skipif(
    not Path(CHROMIUM).exists(), reason="chromium not installed (scripts/setup.sh installs it)"
)


@contextlib.asynccontextmanager
async def chromium(
    headers: dict[str, str] | None = None, viewport: tuple[int, int] = (1280, 900)
) -> AsyncIterator[BrowserContext]:
    """A headless Chromium context (its pages send `headers` with every request)."""
    from playwright.async_api import async_playwright

    profile = tempfile.mkdtemp(prefix="codex-mcp-chromium-")
    try:
        async with async_playwright() as playwright:
            context = await playwright.chromium.launch_persistent_context(
                profile,
                executable_path=CHROMIUM,
                headless=True,
                args=FLAGS,
                extra_http_headers=headers or {},
                viewport={"width": viewport[0], "height": viewport[1]},
            )
            try:
                yield context
            finally:
                await context.close()
    finally:
        shutil.rmtree(profile, ignore_errors=True)
