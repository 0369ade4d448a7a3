"""An OAuth-protected HTTP child: it gets its token from the user's login (the token store);
without one it is reported as needing a login and the other children serve on."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from codex_mcp.client import Client
from codex_mcp.client.oauth import OAuth, TokenStore
from oauth_fake import OAuthFake

from .gateway_helpers import BROKEN, Lines, gateway, status, stdio, until, write_config


class ReadRedirect:
    """The user's browser: the fake authorization server approves at once."""

    redirect_uri = "http://127.0.0.1:9/callback"

    async def authorize(self, url: str) -> str:
        async with aiohttp.ClientSession() as http, http.get(url, allow_redirects=False) as page:
            return page.headers["Location"]


@pytest.mark.slow
async def test_an_http_child_needs_a_login_then_uses_it(
    aiohttp_server: Any, tmp_path: Path
) -> None:
    fake = OAuthFake()
    server = await aiohttp_server(fake.app(), host="127.0.0.1")
    url = str(server.make_url("/mcp"))
    config = write_config(
        tmp_path, {"local": stdio(BROKEN, "--tools", "echo"), "remote": {"url": url}}
    )
    env = {"CODEX_MCP_OAUTH_DIR": str(tmp_path / "oauth")}
    needs_login = f"needs login: run `codex-mcp-client login {url}`"

    errlog = Lines()
    async with gateway(config, errlog=errlog, env=env) as client:
        names = [tool.name for tool in await client.list_tools()]
        assert names == ["local__echo", "gateway_status"]
        servers = await until(lambda: _with_error(client), timeout=30)
        assert needs_login in servers["remote"]["last_error"]
        assert (await client.call_tool("local__echo", {"message": "on"})).text == "on"
        summary = await errlog.wait_for(r"^Started 1 child server\(s\): local")
        assert re.search(r"remote \(.*needs login: run `codex-mcp-client login ", summary)

    # The user logs in once (here in-process, the test playing the browser) ...
    auth = OAuth(store=TokenStore(tmp_path / "oauth"), authorizer=ReadRedirect())
    async with Client.http(url, auth=auth) as client:
        await client.list_tools()
    token = next(iter(fake.tokens))

    # ... and the gateway's child uses that login.
    async with gateway(config, env=env) as client:
        await until(lambda: _has_tool(client, "remote__whoami"), timeout=30)
        assert (await client.call_tool("remote__whoami", {})).text == f"token {token}"


async def _with_error(client: Client) -> dict[str, Any] | None:
    servers = await status(client)
    return servers if servers["remote"]["last_error"] else None


async def _has_tool(client: Client, name: str) -> bool:
    return name in [tool.name for tool in await client.list_tools(cache=False)]
