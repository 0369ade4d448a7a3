"""`codex-mcp-client login`, `tools`, `call` and a refresh against an authorization server
built on the official MCP SDK's handlers (`mcp.server.auth`, servers/
sdk_authorization_server.py) and `codex-mcp-http --oauth-issuer` accepting its JWTs: real
processes on 127.0.0.1. The SDK's token endpoint wants `client_id` in the form even when
the client authenticates with HTTP Basic (issue #31)."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from client_cli import cli, login_as_browser
from http_process import SERVERS, HttpProcess

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
