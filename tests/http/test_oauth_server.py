"""`codex-mcp-http --oauth-issuer` as an OAuth 2.1 resource server, against a real
authorization server (oauth2-mock-server, npm) and the official Python SDK's OAuth client,
all real processes on 127.0.0.1 (specs/oauth.md, "The server")."""

from __future__ import annotations

import asyncio
import json
import os
import re
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import aiohttp
import anyio
import pytest
from aiohttp import web
from aiohttp.test_utils import TestServer
from codex_mcp.client import Client
from codex_mcp.client.oauth import ClientProfile, OAuth, TokenStore
from codex_mcp.launch import StartupError
from codex_mcp.policy import Caller, Policy, PolicyConfig
from codex_mcp.policy.config import tool_scope_rules
from codex_mcp.transports.http import HttpConfig, create_app
from codex_mcp.transports.http.oauth import ResourceServer
from http_helpers import JSON, build_test_server, call, init, open_session, text_of
from http_process import ROOT, HttpProcess
from oauth_helpers import AuthorizationServer

pytest.importorskip("mcp", reason="the official MCP SDK is not installed: pip install mcp")

import httpx2  # the SDK's HTTP client
from mcp import ClientSession
from mcp.client.auth import OAuthClientProvider
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.auth import (
    AuthorizationCodeResult,
    OAuthClientInformationFull,
    OAuthClientMetadata,
    OAuthToken,
)

pytestmark = pytest.mark.interop

CALLBACK = "http://127.0.0.1:9/callback"  # never reached: the test reads the redirect


def challenge(reply: aiohttp.ClientResponse) -> dict[str, str]:
    header = reply.headers.get("WWW-Authenticate", "")
    assert header.startswith("Bearer "), header
    return dict(re.findall(r'(\w+)="([^"]*)"', header))


class MemoryStorage:
    """The SDK's TokenStorage, with a client registered beforehand (the mock has no
    dynamic registration)."""

    def __init__(self, client_id: str) -> None:
        self.tokens: OAuthToken | None = None
        self.client = OAuthClientInformationFull(
            client_id=client_id,
            redirect_uris=[CALLBACK],  # type: ignore[list-item]
            token_endpoint_auth_method="none",
            grant_types=["authorization_code", "refresh_token"],
            response_types=["code"],
        )

    async def get_tokens(self) -> OAuthToken | None:
        return self.tokens

    async def set_tokens(self, tokens: OAuthToken) -> None:
        self.tokens = tokens

    async def get_client_info(self) -> OAuthClientInformationFull | None:
        return self.client

    async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
        self.client = client_info


class Browser:
    """Plays the user's browser: opens the authorization URL (the mock approves at once)
    and hands the code in its redirect to the SDK."""

    def __init__(self) -> None:
        self.visited: list[str] = []
        self.redirect: str | None = None

    async def open(self, url: str) -> None:
        self.visited.append(url)
        async with httpx2.AsyncClient() as client:
            reply = await client.get(url)
        assert reply.status_code == 302, reply.text
        self.redirect = reply.headers["location"]

    async def callback(self) -> AuthorizationCodeResult:
        assert self.redirect is not None
        query = parse_qs(urlsplit(self.redirect).query)
        return AuthorizationCodeResult(code=query["code"][0], state=query.get("state", [None])[0])


def sdk_provider(url: str, client_id: str = "sdk-client") -> tuple[OAuthClientProvider, Browser]:
    browser = Browser()
    provider = OAuthClientProvider(
        server_url=url,
        client_metadata=OAuthClientMetadata(
            redirect_uris=[CALLBACK],  # type: ignore[list-item]
            token_endpoint_auth_method="none",
            grant_types=["authorization_code", "refresh_token"],
        ),
        storage=MemoryStorage(client_id),
        redirect_handler=browser.open,
        callback_handler=browser.callback,
    )
    return provider, browser


async def test_the_sdk_client_completes_the_flow_and_steps_up_for_a_tools_scope(
    resource_server: HttpProcess, authorization_server: AuthorizationServer
) -> None:
    provider, browser = sdk_provider(resource_server.url)
    async with (
        httpx2.AsyncClient(auth=provider, timeout=30) as http,
        streamable_http_client(resource_server.url, http_client=http) as (read, write),
        ClientSession(read, write) as session,
    ):
        with anyio.fail_after(30):
            await session.initialize()
            tools = await session.list_tools()
            # The first token holds `mcp` only: the policy hides echo from its listing
            # (listed <=> callable, specs/policy.md), and a call by name gets 403 naming
            # echo.use, so the SDK authorizes again for it (step-up).
            assert "echo" not in {tool.name for tool in tools.tools}
            result = await session.call_tool("echo", {"message": "through OAuth"})
            tools = await session.list_tools()  # the stepped-up token's listing has it
            assert "echo" in {tool.name for tool in tools.tools}
    assert not result.is_error
    assert result.content[0].text == "through OAuth"  # type: ignore[union-attr]
    first, second = (parse_qs(urlsplit(url).query) for url in browser.visited)
    # RFC 8707: the token is asked for this resource, with the scopes the server named.
    assert first["resource"] == [resource_server.url]
    assert first["scope"] == ["mcp"]
    assert set(second["scope"][0].split()) == {"mcp", "echo.use"}
    assert first["code_challenge_method"] == ["S256"]


async def test_a_token_is_refused_when_missing_expired_or_for_another_resource(
    resource_server: HttpProcess, authorization_server: AuthorizationServer
) -> None:
    url = resource_server.url
    issuer = authorization_server
    cases = {
        "missing": None,
        "another audience": await issuer.token(audience="http://127.0.0.1:1/mcp", scope="mcp"),
        "no audience": await issuer.token(scope="mcp"),
        "expired": await issuer.token("expired-client", audience=url, scope="mcp"),
        "not a JWT": "opaque-token",
    }
    async with aiohttp.ClientSession() as http:
        for case, token in cases.items():
            headers = {**JSON, **({"Authorization": f"Bearer {token}"} if token else {})}
            async with http.post(url, json=init(), headers=headers) as reply:
                assert reply.status == 401, case
                params = challenge(reply)
                assert params["resource_metadata"].endswith(
                    "/.well-known/oauth-protected-resource/mcp"
                )
                assert params["scope"] == "mcp"
                if token is None:
                    assert "error" not in params
                else:
                    assert params["error"] == "invalid_token", case
                body = await reply.json()
        assert "expired" in body["error"]["message"] or case != "expired"
        # And a good one passes.
        good = await issuer.token(audience=url, scope="mcp")
        session = await open_session(http, url, Authorization=f"Bearer {good}")
        async with http.post(
            url, json={"jsonrpc": "2.0", "id": 2, "method": "tools/list"}, headers=session
        ) as reply:
            assert reply.status == 200


async def test_a_missing_scope_gets_403_naming_the_scope(
    resource_server: HttpProcess, authorization_server: AuthorizationServer
) -> None:
    url = resource_server.url
    async with aiohttp.ClientSession() as http:
        # Without the server-wide scope: refused at the door.
        bare = await authorization_server.token(audience=url, scope="profile")
        async with http.post(
            url, json=init(), headers={**JSON, "Authorization": f"Bearer {bare}"}
        ) as reply:
            assert reply.status == 403
            params = challenge(reply)
            assert params["error"] == "insufficient_scope"
            assert set(params["scope"].split()) == {"profile", "mcp"}
        # With it, but not the tool's: the session works, the echo call is refused.
        token = await authorization_server.token(audience=url, scope="mcp")
        session = await open_session(http, url, Authorization=f"Bearer {token}")
        async with http.post(url, json=call(5, "echo", {"message": "x"}), headers=session) as reply:
            assert reply.status == 403
            params = challenge(reply)
            assert params["error"] == "insufficient_scope"
            assert set(params["scope"].split()) == {"mcp", "echo.use"}
            assert (await reply.json())["id"] == 5
        # A token with both calls it.
        both = await authorization_server.token(audience=url, scope="mcp echo.use")
        session = await open_session(http, url, Authorization=f"Bearer {both}")
        async with http.post(
            url, json=call(6, "echo", {"message": "ok"}), headers=session
        ) as reply:
            assert reply.status == 200
            assert text_of(await reply.json()) == "ok"


async def test_the_protected_resource_metadata_is_served_at_both_paths(
    resource_server: HttpProcess, authorization_server: AuthorizationServer
) -> None:
    base = resource_server.url.removesuffix("/mcp")
    async with aiohttp.ClientSession() as http:
        for path in (
            "/.well-known/oauth-protected-resource/mcp",
            "/.well-known/oauth-protected-resource",
        ):
            async with http.get(base + path) as reply:
                assert reply.status == 200, path
                document = await reply.json()
            assert document["resource"] == resource_server.url
            assert document["authorization_servers"] == [authorization_server.issuer]
            assert document["scopes_supported"] == ["echo.use", "mcp"]


async def test_a_session_belongs_to_the_tokens_subject_not_to_the_token(
    resource_server: HttpProcess, authorization_server: AuthorizationServer
) -> None:
    """The same client with a new token keeps its session; another client's token
    finds no such session."""
    url = resource_server.url
    issuer = authorization_server
    first = await issuer.token("alice", audience=url, scope="mcp echo.use")
    renewed = await issuer.token("alice", audience=url, scope="echo.use mcp")
    assert renewed != first  # (in the same second, the same claims sign the same)
    other = await issuer.token("bob", audience=url, scope="mcp echo.use")
    async with aiohttp.ClientSession() as http:
        session = await open_session(http, url, Authorization=f"Bearer {first}")
        message = call(7, "echo", {"message": "mine"})
        async with http.post(
            url, json=message, headers={**session, "Authorization": f"Bearer {renewed}"}
        ) as reply:
            assert reply.status == 200
        async with http.post(
            url, json=message, headers={**session, "Authorization": f"Bearer {other}"}
        ) as reply:
            assert reply.status == 404


async def test_keys_the_issuer_rotates_to_are_fetched(
    authorization_server: AuthorizationServer,
) -> None:
    # The mock issuer signs with a new key the moment it rotates, within REFETCH_SECONDS of
    # our fetch: until we fetch again each retry is a refused token, and counts as one
    # (guessing.py). A real issuer publishes a key before it signs with it.
    unbounded = ("--auth-failures-per-minute", "1000")
    server = HttpProcess("--oauth-issuer", authorization_server.issuer, *unbounded)
    try:
        url = server.url
        async with aiohttp.ClientSession() as http:
            before = await authorization_server.token(audience=url)
            await open_session(http, url, Authorization=f"Bearer {before}")  # keys fetched
            assert authorization_server.rotate()
            after = await authorization_server.token(audience=url)
            # An unknown key id makes the server fetch the keys again, at most every
            # REFETCH_SECONDS: the token is accepted once that much time has passed.
            deadline = time.monotonic() + 30
            while True:
                async with http.post(
                    url, json=init(), headers={**JSON, "Authorization": f"Bearer {after}"}
                ) as reply:
                    if reply.status == 200:
                        break
                    assert reply.status == 401
                    assert "key" in (await reply.json())["error"]["message"]
                assert time.monotonic() < deadline, "the rotated key was never fetched"
                await asyncio.sleep(0.2)
    finally:
        server.stop()


async def test_static_bearer_tokens_still_work_beside_oauth(
    authorization_server: AuthorizationServer,
) -> None:
    server = HttpProcess(
        "--oauth-issuer", authorization_server.issuer, "--bearer-token", "static-secret"
    )
    try:
        async with aiohttp.ClientSession() as http:
            await open_session(http, server.url, Authorization="Bearer static-secret")
            token = await authorization_server.token(audience=server.url)
            await open_session(http, server.url, Authorization=f"Bearer {token}")
    finally:
        server.stop()


def test_oauth_settings_mistakes_stop_the_start_with_one_line() -> None:
    mistakes = {
        ("--oauth-issuer", "http://auth.example.com"): "use https",
        ("--oauth-issuer", "https://auth.example.com", "--oauth-tool-scope", "echo"): "TOOL=SCOPE",
    }
    for args, said in mistakes.items():
        result = subprocess.run(
            [sys.executable, str(ROOT / "cmd/http"), "--port", "0", *args],
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert result.returncode != 0
        lines = result.stderr.strip().splitlines()
        assert len(lines) == 1 and said in lines[0], result.stderr
    # Off loopback, the resource cannot be guessed from where the server listens.
    with pytest.raises(StartupError, match="--oauth-resource"):
        ResourceServer(HttpConfig(host="0.0.0.0", oauth_issuer="https://auth.example.com"))


async def test_a_gateway_child_is_scoped_by_pattern_and_never_sees_the_callers_token(
    authorization_server: AuthorizationServer, tmp_path: Path
) -> None:
    """The gateway over HTTP with OAuth, its child an HTTP MCP server that records the
    Authorization header of every request it gets: `inner__*` needs `inner.use`, and the
    caller's token reaches the child on no request."""
    seen: list[str | None] = []

    @web.middleware
    async def record(request: web.Request, handler: Any) -> web.StreamResponse:
        seen.append(request.headers.get("Authorization"))
        return await handler(request)

    child_app = create_app(build_test_server().core, HttpConfig())
    child_app.middlewares.insert(0, record)
    async with TestServer(child_app, host="127.0.0.1") as child:
        config = tmp_path / ".mcp.json"
        config.write_text(
            json.dumps({"mcpServers": {"inner": {"url": str(child.make_url("/mcp"))}}})
        )
        env = {k: v for k, v in os.environ.items() if not k.startswith("CODEX_MCP_")}
        gateway = HttpProcess(
            "--oauth-issuer",
            authorization_server.issuer,
            "--oauth-tool-scope",
            "inner__*=inner.use",
            env={**env, "CODEX_MCP_WRAPPER_CONFIG": str(config)},
        )
        try:
            url = gateway.url
            async with aiohttp.ClientSession() as http:
                lacking = await authorization_server.token(audience=url, scope="mcp")
                session = await open_session(http, url, Authorization=f"Bearer {lacking}")
                message = call(3, "inner__echo", {"message": "via the gateway"})
                async with http.post(url, json=message, headers=session) as reply:
                    assert reply.status == 403
                    assert challenge(reply)["scope"] == "inner.use mcp"
                token = await authorization_server.token(audience=url, scope="inner.use")
                session = await open_session(http, url, Authorization=f"Bearer {token}")
                async with http.post(url, json=message, headers=session) as reply:
                    assert reply.status == 200, await reply.text()
                    assert text_of(await reply.json()) == "via the gateway"
        finally:
            gateway.stop()
    assert seen, "the child was never called"
    assert all(header is None for header in seen), seen  # no token at all, ours least


async def test_an_unreachable_issuer_gets_503_not_401(
    authorization_server: AuthorizationServer,
) -> None:
    """Tokens cannot be checked while the issuer's keys cannot be fetched: that is not the
    client's fault (503, retry), and the log says why."""
    with socket.socket() as probe:  # a port nothing listens on
        probe.bind(("127.0.0.1", 0))
        closed = probe.getsockname()[1]
    server = HttpProcess("--oauth-issuer", f"http://127.0.0.1:{closed}")
    try:
        token = await authorization_server.token(audience=server.url)
        async with (
            aiohttp.ClientSession() as http,
            http.post(
                server.url, json=init(), headers={**JSON, "Authorization": f"Bearer {token}"}
            ) as reply,
        ):
            assert reply.status == 503
            assert reply.headers["Retry-After"]
            assert f"127.0.0.1:{closed}" in (await reply.json())["error"]["message"]
        server.wait_for_line("cannot fetch the keys of http://127.0.0.1", timeout=10)
    finally:
        server.stop()


class ReadRedirect:
    """Our client's Authorizer playing the user's browser (the mock approves at once)."""

    redirect_uri = CALLBACK

    def __init__(self) -> None:
        self.visited: list[str] = []

    async def authorize(self, url: str) -> str:
        self.visited.append(url)
        async with aiohttp.ClientSession() as http, http.get(url, allow_redirects=False) as page:
            return page.headers["Location"]


async def test_our_client_logs_in_steps_up_and_the_gateway_uses_its_login(
    resource_server: HttpProcess, authorization_server: AuthorizationServer, tmp_path: Path
) -> None:
    """Our own client (codex_mcp.client.oauth) against the same resource server and real
    authorization server: the flow, then a step-up for echo's scope; then the gateway, its
    child being that server, calls through with the login the client kept."""
    url = resource_server.url
    browser = ReadRedirect()
    store = TokenStore(tmp_path / "oauth")
    auth = OAuth(store=store, profile=ClientProfile(client_id="codex-mcp-test"), authorizer=browser)
    async with Client.http(url, auth=auth) as client:
        # Hidden from the `mcp` token's listing, refused by name with a step-up 403.
        assert "echo" not in [tool.name for tool in await client.list_tools()]
        assert (await client.call_tool("echo", {"message": "ours"})).text == "ours"
    first, second = (parse_qs(urlsplit(visit).query) for visit in browser.visited)
    assert first["resource"] == [url] and first["scope"] == ["mcp"]
    assert set(second["scope"][0].split()) == {"mcp", "echo.use"}

    config = tmp_path / ".mcp.json"
    child = {"url": url, "oauth": {"client_id": "codex-mcp-test"}}
    config.write_text(json.dumps({"mcpServers": {"rs": child}}))
    env = {k: v for k, v in os.environ.items() if not k.startswith("CODEX_MCP_")}
    gateway = HttpProcess(
        env={
            **env,
            "CODEX_MCP_WRAPPER_CONFIG": str(config),
            "CODEX_MCP_OAUTH_DIR": str(store.directory),
        }
    )
    try:
        async with aiohttp.ClientSession() as http:
            session = await open_session(http, gateway.url)
            listing = {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}
            deadline = time.monotonic() + 30
            while True:  # the child starts in the background
                async with http.post(gateway.url, json=listing, headers=session) as reply:
                    names = [tool["name"] for tool in (await reply.json())["result"]["tools"]]
                if "rs__echo" in names:
                    break
                assert time.monotonic() < deadline, names
                await asyncio.sleep(0.2)
            message = call(3, "rs__echo", {"message": "through the gateway"})
            async with http.post(gateway.url, json=message, headers=session) as reply:
                assert text_of(await reply.json()) == "through the gateway"
    finally:
        gateway.stop()


def test_scopes_are_read_space_or_comma_separated() -> None:
    server = ResourceServer(
        HttpConfig(
            oauth_issuer="https://auth.example.com",
            oauth_resource="https://mcp.example.com/mcp",
            oauth_scope=["mcp read", "write"],  # CODEX_MCP_OAUTH_SCOPE="mcp read,write"
            oauth_tool_scope=["run_*=exec admin"],
        )
    )
    assert server.scopes == {"mcp", "read", "write"}
    # A tool's scopes are the policy's require rules (policy/config.py).
    policy = Policy(PolicyConfig(), tool_scope_rules(["run_*=exec admin"]))
    caller = Caller(scopes=frozenset({"exec"}))
    assert policy.scopes_to_call(caller, "run_query") == {"admin"}
    assert policy.scopes_to_call(caller, "echo") == frozenset()
    assert server.metadata_url == "https://mcp.example.com/.well-known/oauth-protected-resource/mcp"
