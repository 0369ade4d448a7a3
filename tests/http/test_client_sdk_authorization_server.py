"""`codex-mcp-client login`, `tools`, `call` and a refresh against an authorization server
built on the official MCP SDK's handlers (`mcp.server.auth`, servers/
sdk_authorization_server.py) and `codex-mcp-http --oauth-issuer` accepting its JWTs: real
processes on 127.0.0.1. The SDK's token endpoint wants `client_id` in the form even when
the client authenticates with HTTP Basic (issue #31). Also step-up for a tool's scope,
`logout` revoking at the SDK's /revoke, and the gateway holding its OAuth child's token
while its own caller holds only the gateway's credential."""

from __future__ import annotations

import json
import re
import shlex
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import aiohttp
import pytest
from client_cli import cli, login_as_browser
from codex_mcp.client import Client
from codex_mcp.client.oauth import TokenStore
from gateway.gateway_helpers import launch_http_gateway, stop, until, write_config
from http_process import SERVERS, HttpProcess
from oauth_helpers import gateway_relays_echo, kept_claims

pytest.importorskip("mcp.server.auth.routes", reason="the official MCP SDK is not installed")

pytestmark = [pytest.mark.interop, pytest.mark.slow]


class SdkAuthorizationServer:
    def __init__(self) -> None:
        self.process = subprocess.Popen(
            [sys.executable, str(SERVERS / "sdk_authorization_server.py")],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        assert self.process.stdout is not None
        line = self.process.stdout.readline()
        if not line:
            assert self.process.stderr is not None
            raise AssertionError(
                "the SDK authorization server did not start: " + self.process.stderr.read()
            )
        self.issuer: str = json.loads(line)["issuer"]
        self.token_requests: list[dict[str, Any]] = []
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self.token_requests.append(json.loads(line))

    def wait_for_requests(self, count: int, timeout: float = 10) -> list[dict[str, Any]]:
        deadline = time.monotonic() + timeout
        while len(self.token_requests) < count:
            assert time.monotonic() < deadline, self.token_requests
            time.sleep(0.02)
        return list(self.token_requests)

    def stop(self) -> None:
        self.process.terminate()
        try:
            self.process.wait(10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


@pytest.fixture
def sdk_authorization_server() -> Iterator[SdkAuthorizationServer]:
    server = SdkAuthorizationServer()
    yield server
    server.stop()


async def test_the_cli_logs_in_lists_calls_and_refreshes_at_the_sdks_authorization_server(
    sdk_authorization_server: SdkAuthorizationServer, http_process: Any, tmp_path: Path
) -> None:
    issuer = sdk_authorization_server.issuer
    resource: HttpProcess = http_process("--oauth-issuer", issuer, "--oauth-scope", "mcp")
    url = resource.url
    env = {"CODEX_MCP_OAUTH_DIR": str(tmp_path / "oauth")}

    # Dynamic registration at the SDK's /register: it gives a secret, client_secret_basic.
    logged_in, _ = await login_as_browser(url, env=env)
    assert logged_in["logged_in"] and logged_in["issuer"] == issuer, logged_in
    assert logged_in["refreshable"], logged_in
    grant = sdk_authorization_server.wait_for_requests(1)[0]
    assert grant["basic"] and grant["token_request"]["grant_type"] == "authorization_code"
    assert grant["token_request"]["client_id"]  # beside Basic: the SDK requires it
    assert grant["token_request"]["resource"] == url

    # The token's 30 s are within the client's refresh margin (60 s): each command (and
    # the login's own listing) refreshes it first.
    before = len(sdk_authorization_server.token_requests)
    code, tools, err = await cli("tools", "--url", url, env=env)
    assert code == 0 and "echo" in [tool["name"] for tool in tools], err
    code, result, err = await cli(
        "call", "echo", '{"message": "via the SDK AS"}', "--url", url, env=env
    )
    assert code == 0 and result["content"][0]["text"] == "via the SDK AS", err

    requests = sdk_authorization_server.wait_for_requests(before + 2)
    refreshes = [r for r in requests if r["token_request"]["grant_type"] == "refresh_token"]
    assert len(refreshes) == len(requests) - 1 >= 2, requests
    for refresh in refreshes:
        assert refresh["token_request"]["resource"] == url  # RFC 8707, kept on refresh
        assert refresh["token_request"]["client_id"] and refresh["basic"]


async def test_the_clis_advice_after_a_scope_refusal_gets_the_scope_at_the_sdks_as(
    sdk_authorization_server: SdkAuthorizationServer, http_process: Any, tmp_path: Path
) -> None:
    issuer = sdk_authorization_server.issuer
    resource: HttpProcess = http_process(
        "--oauth-issuer", issuer, "--oauth-scope", "mcp", "--oauth-tool-scope", "echo=echo.use"
    )
    url = resource.url
    env = {"CODEX_MCP_OAUTH_DIR": str(tmp_path / "oauth")}
    logged_in, _ = await login_as_browser(url, env=env)
    assert logged_in["logged_in"] and logged_in["refreshable"], logged_in
    assert kept_claims(tmp_path / "oauth", url)["scope"].split() == ["mcp"]

    # echo needs echo.use, which the token lacks: 403 insufficient_scope, and the CLI names
    # the scope and the exact login that gets it.
    code, _, err = await cli("call", "echo", '{"message": "hi"}', "--url", url, env=env)
    assert code == 1 and "lacks scope echo.use" in err, err
    advice = re.search(r"run `codex-mcp-client ([^`]+)`", err)
    assert advice is not None and "--scope echo.use" in advice.group(1), err
    command = shlex.split(advice.group(1))
    assert command[:2] == ["login", url], command
    stepped_up, visited = await login_as_browser(*command[1:], env=env)
    assert set(parse_qs(urlsplit(visited).query)["scope"][0].split()) == {"mcp", "echo.use"}
    assert stepped_up["logged_in"], stepped_up
    assert "echo.use" in kept_claims(tmp_path / "oauth", url)["scope"].split()

    code, result, err = await cli("call", "echo", '{"message": "hi"}', "--url", url, env=env)
    assert code == 0 and result["content"][0]["text"] == "hi", err


async def test_logout_forgets_and_reports_the_sdks_revoke_refusing_basic_auth(
    sdk_authorization_server: SdkAuthorizationServer, http_process: Any, tmp_path: Path
) -> None:
    issuer = sdk_authorization_server.issuer
    resource: HttpProcess = http_process("--oauth-issuer", issuer, "--oauth-scope", "mcp")
    url = resource.url
    env = {"CODEX_MCP_OAUTH_DIR": str(tmp_path / "oauth")}
    logged_in, _ = await login_as_browser(url, env=env)
    assert logged_in["refreshable"], logged_in
    # The SDK's create_auth_routes serves /revoke (RevocationOptions enabled) and names it
    # in the metadata: logout hands the refresh token back there.
    async with (
        aiohttp.ClientSession() as http,
        http.get(f"{issuer}.well-known/oauth-authorization-server") as reply,
    ):
        assert (await reply.json())["revocation_endpoint"] == f"{issuer}revoke"
    kept = TokenStore(tmp_path / "oauth").load(url)
    assert kept.tokens is not None and kept.tokens.refresh_token is not None
    registration = kept.registrations[issuer]
    assert registration.auth_method == "client_secret_basic" and registration.client_secret

    # The SDK's RevocationRequest (mcp 2.3) has `client_secret: str | None` with no default:
    # a form without `client_secret` is a 400 even when the client authenticates with HTTP
    # Basic, and RFC 6749 section 2.3.1 forbids sending the secret both ways. So the SDK
    # refuses our (correct) revocation: logout forgets the tokens and says why not revoked.
    code, result, err = await cli("logout", url, env=env)
    assert code == 0, err
    assert result == {
        "server": url,
        "forgotten": True,
        "revoked": False,
        "not_revoked": "the revocation_endpoint answered HTTP 400",
    }, err
    code, _, err = await cli("tools", "--url", url, env=env)
    assert code == 1 and f"needs login: run `codex-mcp-client login {url}`" in err, err

    # The same request the CLI sent (Basic, client_id in the form), and the SDK's reason.
    auth = {
        "Authorization": aiohttp.encode_basic_auth(
            registration.client_id, registration.client_secret
        )
    }
    revocation = {
        "token": kept.tokens.refresh_token,
        "token_type_hint": "refresh_token",
        "client_id": registration.client_id,
    }
    async with (
        aiohttp.ClientSession() as http,
        http.post(f"{issuer}revoke", data=revocation, headers=auth) as reply,
    ):
        refused = await reply.json()
        assert reply.status == 400 and refused["error"] == "invalid_request", refused
        assert "client_secret" in refused["error_description"], refused
    # Not revoked, so the issuer still honours the refresh token (when the SDK fixes its
    # RevocationRequest, logout reports revoked and this refresh is refused: flip these).
    refresh = {
        "grant_type": "refresh_token",
        "refresh_token": kept.tokens.refresh_token,
        "client_id": registration.client_id,
        "resource": url,
    }
    async with (
        aiohttp.ClientSession() as http,
        http.post(f"{issuer}token", data=refresh, headers=auth) as reply,
    ):
        assert reply.status == 200, await reply.text()


async def test_the_gateway_holds_the_childs_sdk_token_and_refreshes_it(
    sdk_authorization_server: SdkAuthorizationServer, http_process: Any, tmp_path: Path
) -> None:
    """As test_oidc_provider.py's gateway test, with the SDK's authorization server: the
    gateway over HTTP, its caller holding only the gateway's credential; its child the
    SDK-AS-guarded server, reached with the user's login (the shared token store) and
    refreshed by the gateway for the same resource as its 30 s tokens expire."""
    issuer = sdk_authorization_server.issuer
    resource: HttpProcess = http_process("--oauth-issuer", issuer, "--oauth-scope", "mcp")
    url = resource.url
    store = str(tmp_path / "oauth")
    logged_in, _ = await login_as_browser(url, env={"CODEX_MCP_OAUTH_DIR": store})
    assert logged_in["refreshable"], logged_in
    config = write_config(tmp_path, {"remote": {"url": url}})
    credential = tmp_path / "gateway-tokens"
    credential.write_text("gateway-credential\n")
    gateway_log: list[str] = []
    process, gateway_url = launch_http_gateway(
        config, "--bearer-token-file", str(credential), log=gateway_log, CODEX_MCP_OAUTH_DIR=store
    )
    try:
        before = len(sdk_authorization_server.token_requests)
        headers = {"Authorization": "Bearer gateway-credential"}
        async with Client.http(gateway_url, headers=headers) as client:
            await gateway_relays_echo(gateway_url, client, gateway_log)
            expires = kept_claims(tmp_path / "oauth", url)["exp"]
            await until(lambda: time.time() > expires, timeout=60)
            second = await client.call_tool("remote__echo", {"message": "after expiry"})
            assert second.text == "after expiry", "".join(gateway_log)
        requests = sdk_authorization_server.token_requests[before:]
        refreshes = [r for r in requests if r["token_request"]["grant_type"] == "refresh_token"]
        assert refreshes, sdk_authorization_server.token_requests
        for refresh in refreshes:
            assert refresh["token_request"]["resource"] == url  # RFC 8707, kept on refresh
            assert refresh["token_request"]["client_id"] and refresh["basic"]
        renewed = kept_claims(tmp_path / "oauth", url)
        assert renewed["exp"] > expires and renewed["aud"] == url
    finally:
        stop(process)
