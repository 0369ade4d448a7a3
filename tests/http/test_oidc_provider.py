"""`codex-mcp-client` against an OpenID-certified authorization server (panva's
oidc-provider, npm) guarding a real `codex-mcp-http --oauth-issuer` resource server: each in
its own process on 127.0.0.1, the browser played over HTTP by oidc_browser.py (as the
`$BROWSER` that `login` opens, or as the library's authorizer). Issue #31; specs/oauth.md.

What oidc-provider holds the client to: dynamic registration as a native app with a loopback
redirect, PKCE S256, RFC 8707 `resource` at the authorization and token endpoints (its
access tokens are JWTs for that audience only), refresh token rotation."""

from __future__ import annotations

import asyncio
import io
import json
import os
import re
import shlex
import socket
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import aiohttp
import jwt
import pytest
from codex_mcp.client import Client
from codex_mcp.client.oauth import OAuth, TokenStore
from codex_mcp.client.oauth.browser import LoopbackAuthorizer
from gateway.gateway_helpers import launch_http_gateway, stop, until, write_config
from http_process import HttpProcess
from oauth_helpers import gateway_relays_echo, kept_claims
from oidc_browser import cookie_jar, play
from oidc_helpers import OidcProvider

pytestmark = [pytest.mark.interop, pytest.mark.slow]

CLI = [sys.executable, "-m", "codex_mcp.client.cli"]
BROWSER_SCRIPT = Path(__file__).with_name("oidc_browser.py")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class Stack:
    provider: OidcProvider
    server: HttpProcess
    url: str


def start_stack(ttl: int, refresh: str = "any") -> Stack:
    """oidc-provider for the resource URL, then the resource server trusting it."""
    port = free_port()
    url = f"http://127.0.0.1:{port}/mcp"
    provider = OidcProvider(url, ttl=ttl, refresh=refresh)
    try:
        server = HttpProcess(
            "--port",
            str(port),
            "--oauth-issuer",
            provider.issuer,
            "--oauth-resource",
            url,
            "--oauth-scope",
            "mcp",
            "--oauth-tool-scope",
            "echo=echo.use",
        )
    except BaseException:
        provider.stop()
        raise
    assert server.url == url, server.stderr
    return Stack(provider, server, url)


@pytest.fixture
def stack() -> Iterator[Stack]:
    started = start_stack(ttl=3600)
    yield started
    started.server.stop()
    started.provider.stop()


@pytest.fixture
def short_lived() -> Iterator[Stack]:
    """Access tokens that live 3 s (inside the client's 60 s refresh margin: every command
    refreshes first)."""
    started = start_stack(ttl=3)
    yield started
    started.server.stop()
    started.provider.stop()


@pytest.fixture
def oidc_core_refresh() -> Iterator[Stack]:
    """oidc-provider's own refresh token rule: only for offline_access, honoured only with
    prompt=consent (OpenID Connect Core section 11)."""
    started = start_stack(ttl=3600, refresh="oidc-core")
    yield started
    started.server.stop()
    started.provider.stop()


async def cli(*args: str, env: dict[str, str]) -> tuple[int, Any, str]:
    process = await asyncio.create_subprocess_exec(
        *CLI, *args, env={**os.environ, **env}, stdout=-1, stderr=-1
    )
    out, err = await asyncio.wait_for(process.communicate(), 90)
    return process.returncode or 0, json.loads(out) if out.strip() else None, err.decode()


def browser_env(tmp_path: Path) -> dict[str, str]:
    """The CLI's environment: its own token store, and $BROWSER the stand-in (one executable:
    webbrowser runs $BROWSER's value as a program name, arguments not split off)."""
    browser = tmp_path / "browser"
    browser.write_text(f'#!/bin/sh\nexec "{sys.executable}" "{BROWSER_SCRIPT}" "$@"\n')
    browser.chmod(0o700)
    return {
        "CODEX_MCP_OAUTH_DIR": str(tmp_path / "oauth"),
        "BROWSER": str(browser),
        "OIDC_BROWSER_LOG": str(tmp_path / "browser.log"),
    }


def browser_visits(tmp_path: Path) -> list[dict[str, Any]]:
    log = tmp_path / "browser.log"
    return [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []


def query(url: str) -> dict[str, list[str]]:
    return parse_qs(urlsplit(url).query)


async def test_login_tools_call_with_step_up_and_logout(stack: Stack, tmp_path: Path) -> None:
    url, provider = stack.url, stack.provider
    env = browser_env(tmp_path)

    code, _, err = await cli("tools", "--url", url, env=env)
    assert code == 1 and f"needs login: run `codex-mcp-client login {url}`" in err, err

    # `login` opens $BROWSER (webbrowser.open), which signs in and consents.
    code, logged_in, err = await cli("login", url, "--compact", env=env)
    assert code == 0, err + "".join(provider.errors)
    assert logged_in["logged_in"] and logged_in["refreshable"], logged_in
    assert logged_in["issuer"] == provider.issuer
    (visit,) = browser_visits(tmp_path)
    assert visit["prompts"] == ["login", "consent"], visit
    assert visit["status"] == 200 and "Authorization complete" in visit["text"], visit
    asked = query(visit["url"])
    assert asked["resource"] == [url]
    assert asked["code_challenge_method"] == ["S256"]
    assert set(asked["scope"][0].split()) == {"mcp", "offline_access"}
    grant = provider.wait_for_grants(1)[0]
    assert grant == {"grant_type": "authorization_code", "resource": url, "scope": None}
    token = kept_claims(tmp_path / "oauth", url)
    assert token["aud"] == url and token["iss"] == provider.issuer and token["sub"] == "alice"
    assert token["scope"].split() == ["mcp"]  # the resource's scopes only

    code, tools, err = await cli("tools", "--url", url, env=env)
    assert code == 0, err
    # echo needs echo.use: hidden from this token's listing (specs/policy.md), yet named
    # by a call it gets the step-up 403.
    assert "echo" not in {tool["name"] for tool in tools} and "sleep" in str(tools)

    # echo needs echo.use, which the token lacks: the server answers 403 insufficient_scope
    # and the CLI, which has no browser outside `login`, names the scope and the login for it.
    code, _, err = await cli("call", "echo", '{"message": "hi"}', "--url", url, env=env)
    assert code == 1 and "lacks scope echo.use" in err and "--scope echo.use" in err, err

    code, logged_in, err = await cli(
        "login", url, "--compact", "--scope", "mcp", "--scope", "echo.use", env=env
    )
    assert code == 0, err
    second = browser_visits(tmp_path)[1]
    assert set(query(second["url"])["scope"][0].split()) == {"mcp", "echo.use"}
    assert "echo.use" in kept_claims(tmp_path / "oauth", url)["scope"].split()

    code, result, err = await cli("call", "echo", '{"message": "hi"}', "--url", url, env=env)
    assert code == 0 and result["content"][0]["text"] == "hi", err
    assert result["content"][0]["text"] == "hi"

    code, result, _ = await cli("logout", url, env=env)
    assert result == {"server": url, "forgotten": True, "revoked": True}
    code, _, err = await cli("tools", "--url", url, env=env)
    assert code == 1 and "needs login" in err, err


class PlayedBrowser(LoopbackAuthorizer):
    """The library's loopback authorizer, with the user's browser played by the test."""

    def __init__(self) -> None:
        super().__init__(open_browser=False, out=io.StringIO())
        self.visits: list[dict[str, Any]] = []
        self.jar = cookie_jar()  # one browser: signed in once

    async def authorize(self, url: str) -> str:
        async def browse() -> None:
            self.visits.append({"url": url, **await play(url, jar=self.jar)})

        browsing = asyncio.create_task(browse())
        try:
            return await super().authorize(url)
        finally:
            await browsing


async def test_the_library_steps_up_in_place_for_a_tools_scope(
    stack: Stack, tmp_path: Path
) -> None:
    url = stack.url
    browser = PlayedBrowser()
    async with (
        browser,
        Client.http(url, auth=OAuth(store=TokenStore(tmp_path), authorizer=browser)) as client,
    ):
        assert "echo" not in {tool.name for tool in await client.list_tools()}  # no echo.use
        result = await client.call_tool("echo", {"message": "stepped up"})
    assert not result.is_error and result.raw["content"][0]["text"] == "stepped up"
    first, second = (query(visit["url"]) for visit in browser.visits)
    assert set(first["scope"][0].split()) == {"mcp", "offline_access"}
    assert set(second["scope"][0].split()) == {"mcp", "offline_access", "echo.use"}
    assert first["resource"] == second["resource"] == [url]
    assert [visit["prompts"] for visit in browser.visits] == [["login", "consent"], ["consent"]]


async def test_an_expired_token_is_refreshed_for_the_same_resource(
    short_lived: Stack, tmp_path: Path
) -> None:
    url, provider = short_lived.url, short_lived.provider
    env = browser_env(tmp_path)
    code, logged_in, err = await cli("login", url, "--compact", env=env)
    assert code == 0 and logged_in["refreshable"], err
    kept = TokenStore(tmp_path / "oauth").load(url).tokens
    assert kept is not None and kept.refresh_token is not None
    # Wait until the kept token is past its expiry (by the issuer's own `exp`).
    expires = jwt.decode(kept.access_token, options={"verify_signature": False})["exp"]
    deadline = time.monotonic() + 30
    while time.time() <= expires:
        assert time.monotonic() < deadline, "the 3 s token never expired"
        await asyncio.sleep(0.1)
    before = len(provider.grants)

    code, tools, err = await cli("tools", "--url", url, env=env)
    assert code == 0, err
    assert "sleep" in {tool["name"] for tool in tools}
    refreshes = [g for g in provider.grants[before:] if g["grant_type"] == "refresh_token"]
    assert refreshes, provider.grants
    # RFC 8707: the refresh names the resource again, and the new token is for it.
    assert all(g["resource"] == url and "error" not in g for g in refreshes), refreshes
    renewed = TokenStore(tmp_path / "oauth").load(url).tokens
    assert renewed is not None and renewed.access_token != kept.access_token
    assert renewed.refresh_token != kept.refresh_token  # rotated
    assert kept_claims(tmp_path / "oauth", url)["aud"] == url
    # Rotation for real: the spent refresh token is refused at the token endpoint.
    registration = TokenStore(tmp_path / "oauth").load(url).registrations[provider.issuer]
    spent = {
        "grant_type": "refresh_token",
        "refresh_token": kept.refresh_token,
        "client_id": registration.client_id,
        "resource": url,
    }
    async with (
        aiohttp.ClientSession() as http,
        http.post(f"{provider.issuer}/token", data=spent) as reply,
    ):
        assert reply.status == 400 and (await reply.json())["error"] == "invalid_grant"


async def test_the_gateway_holds_the_childs_token_and_refreshes_it(
    short_lived: Stack, tmp_path: Path
) -> None:
    """The gateway over HTTP, its caller holding only the gateway's credential; its child is
    the oidc-provider-guarded server, reached with the user's login (the shared token
    store), refreshed by the gateway for the same resource as its 3 s tokens expire."""
    url, provider = short_lived.url, short_lived.provider
    env = browser_env(tmp_path)
    code, _, err = await cli(
        "login", url, "--compact", "--scope", "mcp", "--scope", "echo.use", env=env
    )
    assert code == 0, err
    config = write_config(tmp_path, {"remote": {"url": url}})
    credential = tmp_path / "gateway-tokens"
    credential.write_text("gateway-credential\n")
    gateway_log: list[str] = []
    process, gateway_url = launch_http_gateway(
        config,
        "--bearer-token-file",
        str(credential),
        log=gateway_log,
        CODEX_MCP_OAUTH_DIR=env["CODEX_MCP_OAUTH_DIR"],
    )
    try:
        before = len(provider.grants)
        headers = {"Authorization": "Bearer gateway-credential"}
        async with Client.http(gateway_url, headers=headers) as client:
            await gateway_relays_echo(gateway_url, client, gateway_log)
            kept = TokenStore(tmp_path / "oauth").load(url).tokens
            assert kept is not None
            expires = jwt.decode(kept.access_token, options={"verify_signature": False})["exp"]
            await until(lambda: time.time() > expires, timeout=30)
            second = await client.call_tool("remote__echo", {"message": "after expiry"})
            assert second.text == "after expiry", "".join(gateway_log)
        refreshes = [g for g in provider.grants[before:] if g["grant_type"] == "refresh_token"]
        assert refreshes, provider.grants
        assert all(g["resource"] == url and "error" not in g for g in refreshes), refreshes
    finally:
        stop(process)


async def test_a_login_to_an_openid_provider_is_refreshable(
    oidc_core_refresh: Stack, tmp_path: Path
) -> None:
    url = oidc_core_refresh.url
    env = browser_env(tmp_path)
    code, logged_in, err = await cli("login", url, "--compact", env=env)
    assert code == 0, err
    (visit,) = browser_visits(tmp_path)
    assert "offline_access" in query(visit["url"])["scope"][0].split()  # it is asked for
    assert logged_in["refreshable"], logged_in


async def test_logout_revokes_the_refresh_token_at_the_issuer(stack: Stack, tmp_path: Path) -> None:
    url, provider = stack.url, stack.provider
    env = browser_env(tmp_path)
    code, _, err = await cli("login", url, "--compact", env=env)
    assert code == 0, err
    kept = TokenStore(tmp_path / "oauth").load(url)
    assert kept.tokens is not None and kept.tokens.refresh_token is not None
    registration = kept.registrations[provider.issuer]
    code, result, _ = await cli("logout", url, env=env)
    assert result == {"server": url, "forgotten": True, "revoked": True}
    form = {
        "grant_type": "refresh_token",
        "refresh_token": kept.tokens.refresh_token,
        "client_id": registration.client_id,
        "resource": url,
    }
    async with (
        aiohttp.ClientSession() as http,
        http.post(f"{provider.issuer}/token", data=form) as reply,
    ):
        assert reply.status == 400, "the refresh token still works after logout"


async def test_the_clis_advice_after_a_scope_refusal_gets_the_scope(
    stack: Stack, tmp_path: Path
) -> None:
    url = stack.url
    env = browser_env(tmp_path)
    code, _, err = await cli("login", url, "--compact", env=env)
    assert code == 0, err
    code, _, err = await cli("call", "echo", '{"message": "hi"}', "--url", url, env=env)
    assert code == 1, err
    advice = re.search(r"run `codex-mcp-client ([^`]+)`", err)
    assert advice is not None, err
    code, _, err = await cli(*shlex.split(advice.group(1)), "--compact", env=env)
    assert code == 0, err
    code, result, err = await cli("call", "echo", '{"message": "hi"}', "--url", url, env=env)
    assert code == 0 and result["content"][0]["text"] == "hi", err
