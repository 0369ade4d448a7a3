"""OAuth from the shell: `codex-mcp-client login URL` runs the browser flow once (the test
is the browser: it opens the printed URL, which redirects to the CLI's loopback callback),
later commands use and refresh the kept tokens, `logout` forgets them."""

from __future__ import annotations

import asyncio
import json
import os
import stat
import sys
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from codex_mcp.client import Client
from codex_mcp.client.oauth import OAuth, TokenStore
from oauth_fake import OAuthFake

CLI = [sys.executable, "-m", "codex_mcp.client.cli"]


async def cli(*args: str, env: dict[str, str]) -> tuple[int, Any, str]:
    process = await asyncio.create_subprocess_exec(
        *CLI, *args, env={**os.environ, **env}, stdout=-1, stderr=-1
    )
    out, err = await asyncio.wait_for(process.communicate(), 60)
    return process.returncode or 0, json.loads(out) if out.strip() else None, err.decode()


async def login_as_browser(url: str, env: dict[str, str]) -> Any:
    """Run `login --no-browser`, open the URL it prints, follow it back to the CLI."""
    process = await asyncio.create_subprocess_exec(
        *CLI,
        "login",
        url,
        "--no-browser",
        "--compact",
        env={**os.environ, **env},
        stdout=-1,
        stderr=-1,
    )
    assert process.stderr is not None and process.stdout is not None
    while True:
        line = (await asyncio.wait_for(process.stderr.readline(), 60)).decode()
        assert line, "login ended without printing the authorization URL"
        if line.startswith("http"):
            break
    async with aiohttp.ClientSession() as browser, browser.get(line.strip()) as page:
        assert page.status == 200 and "Authorization complete" in await page.text()
    out = await asyncio.wait_for(process.stdout.read(), 60)
    assert await process.wait() == 0
    return json.loads(out)


@pytest.mark.slow
async def test_login_then_commands_then_logout(aiohttp_server: Any, tmp_path: Path) -> None:
    fake = OAuthFake()
    server = await aiohttp_server(fake.app(), host="127.0.0.1")
    url = str(server.make_url("/mcp"))
    env = {"CODEX_MCP_OAUTH_DIR": str(tmp_path / "oauth")}

    code, _, err = await cli("tools", "--url", url, env=env)
    assert code == 1 and f"needs login: run `codex-mcp-client login {url}`" in err

    logged_in = await login_as_browser(url, env)
    assert logged_in["logged_in"] and logged_in["refreshable"]
    assert fake.log.index("authorize") < fake.log.index("token:authorization_code")
    assert fake.log[-1].startswith("mcp:tools/list:access-")
    token_file = TokenStore(tmp_path / "oauth").path(url)
    assert stat.S_IMODE(token_file.stat().st_mode) == 0o600

    code, result, err = await cli("call", "whoami", "--url", url, env=env)
    assert code == 0, err
    assert result["content"][0]["text"] in {f"token {t}" for t in fake.tokens}

    code, result, _ = await cli("logout", url, env=env)
    assert result["forgotten"] is True and not token_file.exists()
    # The fake publishes no revocation_endpoint: forgotten here, and said so.
    assert result["revoked"] is False and "revocation_endpoint" in result["not_revoked"]
    code, _, err = await cli("tools", "--url", url, env=env)
    assert code == 1 and "needs login" in err


async def test_a_token_about_to_expire_is_refreshed_first(
    aiohttp_server: Any, tmp_path: Path
) -> None:
    """expires_in 30 s is inside the refresh margin: the next request refreshes before it
    is sent, so the server never sees the old token again."""
    fake = OAuthFake(expires_in=30)
    server = await aiohttp_server(fake.app(), host="127.0.0.1")
    url = str(server.make_url("/mcp"))
    env = {"CODEX_MCP_OAUTH_DIR": str(tmp_path)}
    await login_as_browser(url, env)
    first = TokenStore(tmp_path).load(url).tokens
    assert first is not None
    fake.log.clear()
    async with Client.http(url, auth=OAuth(store=TokenStore(tmp_path))) as client:
        await client.list_tools()
    asked = [entry for entry in fake.log if entry.startswith(("token:", "mcp:", "401"))]
    assert asked[0] == "token:refresh_token"  # before anything reached the server
    assert not any(first.access_token in entry for entry in fake.log)
    kept = TokenStore(tmp_path).load(url).tokens
    assert kept is not None and kept.access_token != first.access_token
