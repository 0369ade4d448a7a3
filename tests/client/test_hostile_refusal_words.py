"""What a server says when it refuses a credential reaches the user: every refusal the client
reports keeps the server's own words (`error_description` of its `WWW-Authenticate`, else
the body's), escaped and cut short, since they are outside text bound for a terminal.

A real `codex-mcp-http --oauth-issuer` refuses the token a login got (it is not a JWT);
servers on 127.0.0.1 refuse with hostile words: terminal escapes, a line of their own, far
too many of them (aiohttp's server will not put control characters in a header, so that
one writes its answer on a raw socket: aiohttp's client reads them)."""

from __future__ import annotations

import asyncio
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from aiohttp import web
from codex_mcp.client import Client
from codex_mcp.client.errors import McpClientError
from codex_mcp.client.oauth import OAuth, OAuthError, TokenStore
from oauth_fake import OAuthFake
from support.processes import HttpProcess

#: Words no terminal should get as is: a screen clear, a title change, a bell, a line of
#: their own, a right-to-left override, and far too many of them.
HOSTILE = "\x1b[2J\x1b]0;pwned\x07\nFAKE: all good\r\u202e" + "x" * 100_000
#: What an aiohttp server puts in a header: quotes, backslashes, and too much of it.
LONG = 'FAKE: all good \\"quoted\\" ' + "y" * 6000


class ReadRedirect:
    """The user's browser: the authorization endpoint approves at once."""

    redirect_uri = "http://127.0.0.1:9/callback"

    async def authorize(self, url: str) -> str:
        async with aiohttp.ClientSession() as http, http.get(url, allow_redirects=False) as page:
            return page.headers["Location"]


def assert_shown_safely(message: str, words: str) -> None:
    assert words in message, message
    assert not any(c in message for c in "\x1b\x07\n\r\u202e"), repr(message)
    assert len(message) < 800, len(message)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="a server subprocess")
async def test_a_refused_login_token_says_why_in_the_servers_words(
    aiohttp_server: Any, tmp_path: Path
) -> None:
    fake = OAuthFake()  # the authorization server: its tokens are opaque, not JWTs
    issuer = await aiohttp_server(fake.app(), host="127.0.0.1")
    resource = HttpProcess("--oauth-issuer", str(issuer.make_url("")).rstrip("/"))
    try:
        auth = OAuth(store=TokenStore(tmp_path), authorizer=ReadRedirect())
        with pytest.raises(OAuthError) as refused:
            async with Client.http(resource.url, auth=auth) as client:
                await client.list_tools()
    finally:
        resource.stop()
    assert "token:authorization_code" in fake.log  # logged in, then refused
    message = str(refused.value)
    assert "refused the new token (HTTP 401)" in message, message
    assert "the bearer token is not a JWT" in message, message


class Refusing(OAuthFake):
    """An OAuth server whose /mcp refuses every token it issued, saying `said` in its
    challenge (`in_body`: in its body, the challenge saying nothing)."""

    def __init__(self, status: int, said: str, *, in_body: bool, more: bool) -> None:
        super().__init__()
        self.status, self.said, self.in_body, self.more = status, said, in_body, more

    async def mcp(self, request: web.Request) -> web.Response:
        if "Authorization" not in request.headers:
            return await super().mcp(request)  # the challenge that starts the login
        metadata = f"{self._base(request)}/.well-known/oauth-protected-resource/mcp"
        error = "insufficient_scope" if self.status == 403 else "invalid_token"
        # `more`: each 403 asks for one more scope (the client authorizes again for it,
        # until it gives up); else for what the token has.
        scope = f"mcp more{len(self.log)}" if self.more else "mcp"
        challenge = f'Bearer resource_metadata="{metadata}", error="{error}", scope="{scope}"'
        if self.in_body:
            body = {"error": error, "error_description": self.said}
        else:
            escaped = self.said.replace("\\", "\\\\").replace('"', '\\"')
            challenge += f', error_description="{escaped}"'
            body = {"error": error}
        return web.json_response(body, status=self.status, headers={"WWW-Authenticate": challenge})


@pytest.mark.parametrize("in_body", [False, True], ids=["challenge", "body"])
@pytest.mark.parametrize(
    ("status", "more", "what"),
    [
        (401, False, "refused the new token (HTTP 401)"),
        (403, True, "for lack of scope (HTTP 403)"),
        (403, False, "which it already has"),
    ],
)
async def test_a_refusal_after_login_shows_the_servers_words_escaped(
    aiohttp_server: Any, tmp_path: Path, status: int, more: bool, what: str, in_body: bool
) -> None:
    fake = Refusing(status, HOSTILE if in_body else LONG, in_body=in_body, more=more)
    server = await aiohttp_server(fake.app(), host="127.0.0.1")
    auth = OAuth(store=TokenStore(tmp_path), authorizer=ReadRedirect())
    with pytest.raises(OAuthError) as refused:
        async with Client.http(str(server.make_url("/mcp")), auth=auth) as client:
            await client.list_tools()
    assert_shown_safely(str(refused.value), what)
    assert_shown_safely(str(refused.value), "FAKE: all good")


@pytest.fixture
async def raw_refuser() -> AsyncIterator[str]:
    """A server that answers every request with a 401 whose challenge holds HOSTILE's first
    4 KB, written byte for byte; its base URL."""
    escaped = HOSTILE[:4000].replace("\n", " ").replace("\r", " ").replace('"', '\\"')
    answer = (
        "HTTP/1.1 401 Unauthorized\r\nContent-Length: 0\r\nConnection: close\r\n"
        f'WWW-Authenticate: Bearer error="invalid_token", error_description="{escaped}"\r\n\r\n'
    ).encode()

    async def refuse(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        head = await reader.readuntil(b"\r\n\r\n")
        for line in head.split(b"\r\n"):
            if line.lower().startswith(b"content-length:"):
                await reader.readexactly(int(line.split(b":")[1]))
        writer.write(answer)
        await writer.drain()
        writer.close()

    server = await asyncio.start_server(refuse, "127.0.0.1", 0)
    yield f"http://127.0.0.1:{server.sockets[0].getsockname()[1]}"
    server.close()
    await server.wait_closed()


async def test_a_refused_static_token_shows_the_challenges_words(raw_refuser: str) -> None:
    """No OAuth here (a token given with a header): the words are in the header only."""
    headers = {"Authorization": "Bearer wrong"}
    for client in (
        Client.http(f"{raw_refuser}/mcp", headers=headers),
        Client.sse(f"{raw_refuser}/sse", headers=headers),
    ):
        with pytest.raises(McpClientError) as refused:
            async with client:
                await client.list_tools()
        assert_shown_safely(str(refused.value), "HTTP 401")
        assert_shown_safely(str(refused.value), "FAKE: all good")
