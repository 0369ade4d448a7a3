"""The real `codex-mcp-client` console script as a subprocess, and the browser of its
`login` played by the test (it opens the printed URL; the authorization server approves at
once and redirects to the CLI's loopback callback)."""

from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path
from typing import Any

import aiohttp

CLI = str(Path(sys.executable).with_name("codex-mcp-client"))


async def cli(*args: str, env: dict[str, str]) -> tuple[int, Any, str]:
    process = await asyncio.create_subprocess_exec(
        CLI, *args, env={**os.environ, **env}, stdout=-1, stderr=-1
    )
    out, err = await asyncio.wait_for(process.communicate(), 60)
    return process.returncode or 0, json.loads(out) if out.strip() else None, err.decode()


async def login_as_browser(url: str, *flags: str, env: dict[str, str]) -> tuple[Any, str]:
    """Run `login --no-browser`, open the URL it prints (the mock approves at once and
    redirects to the CLI's callback); the login's output and the URL visited."""
    process = await asyncio.create_subprocess_exec(
        CLI, "login", url, *flags, "--no-browser", "--compact",
        env={**os.environ, **env}, stdout=-1, stderr=-1,
    )  # fmt: skip
    assert process.stderr is not None and process.stdout is not None
    while True:
        line = (await asyncio.wait_for(process.stderr.readline(), 60)).decode()
        assert line, "login ended without printing the authorization URL"
        if line.startswith("http"):
            break
    async with aiohttp.ClientSession() as browser, browser.get(line.strip()) as page:
        assert page.status == 200, await page.text()
    out = await asyncio.wait_for(process.stdout.read(), 60)
    if await process.wait() != 0:
        raise AssertionError((await process.stderr.read()).decode())
    return json.loads(out), line.strip()
