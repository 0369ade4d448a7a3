"""A child that needs a login is "needs login" everywhere, and waits for one (issue #31).

Real processes on 127.0.0.1: an authorization server (oauth2-mock-server), a
`codex-mcp-http --oauth-issuer` child that wants its tokens, and the gateway over stdio and
over HTTP. Until the user logs in the child is "needs login" in `gateway_status`, on the
status page, in /metrics, in a call's error (not retryable, naming the command) and in the
start-up summary, and it is not restarted in a loop; once a login lands in the token store
it comes up without the gateway being restarted. `codex-mcp lint URL` uses the same store.
"""

from __future__ import annotations

import asyncio
import json
import signal
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from aiohttp import web
from codex_mcp.client import Client
from codex_mcp.client.oauth import ClientProfile, OAuth, TokenStore
from codex_mcp.core.errors import McpError
from oauth_fake import OAuthFake
from oauth_helpers import AuthorizationServer
from prometheus_client.parser import text_string_to_metric_families

from .gateway_helpers import (
    BROKEN,
    CMD_MCP,
    PY,
    Lines,
    gateway,
    gateway_env,
    launch_http,
    launch_http_gateway,
    status,
    stdio,
    stop,
    until,
    write_config,
)

pytestmark = pytest.mark.slow
#: The tests with the real authorization server (oauth2-mock-server, npm).
with_mock_server = pytest.mark.interop

#: The mock has no dynamic registration: the gateway's entry names a pre-registered client.
CLIENT_ID = "codex-mcp-test"


@pytest.fixture(scope="module")
def issuer() -> Iterator[str]:
    server = AuthorizationServer()
    yield server.issuer
    server.stop()


@pytest.fixture(scope="module")
def protected(issuer: str) -> Iterator[str]:
    """A real `codex-mcp-http` that wants a token from `issuer` for every request."""
    process, url = launch_http("--oauth-issuer", issuer, "--oauth-scope", "mcp")
    yield url
    stop(process)


class ReadRedirect:
    """The user's browser: the mock authorization server approves at once."""

    redirect_uri = "http://127.0.0.1:9/callback"

    async def authorize(self, url: str) -> str:
        async with aiohttp.ClientSession() as http, http.get(url, allow_redirects=False) as page:
            return page.headers["Location"]


async def log_in(url: str, store: Path) -> None:
    """What `codex-mcp-client login URL` leaves behind: tokens in the store (its public API)."""
    profile = ClientProfile(client_id=CLIENT_ID)
    auth = OAuth(store=TokenStore(store), profile=profile, authorizer=ReadRedirect())
    async with Client.http(url, auth=auth) as client:
        assert "echo" in [tool.name for tool in await client.list_tools()]


def login_config(directory: Path, url: str) -> Path:
    remote = {"url": url, "oauth": {"client_id": CLIENT_ID}}
    return write_config(directory, {"local": stdio(BROKEN, "--tools", "echo"), "remote": remote})


def assert_needs_login(error: McpError, url: str) -> None:
    assert f"needs login: run `codex-mcp-client login {url}`" in error.message, error.message
    assert "restarting" not in error.message
    assert isinstance(error.data, dict)
    assert error.data["retryable"] is False
    assert error.data["login"] == f"codex-mcp-client login {url}"


@with_mock_server
async def test_a_child_that_needs_a_login_waits_for_it_over_stdio(
    protected: str, tmp_path: Path
) -> None:
    config = login_config(tmp_path, protected)
    store = tmp_path / "oauth"
    errlog = Lines()
    async with gateway(config, errlog=errlog, env={"CODEX_MCP_OAUTH_DIR": str(store)}) as client:
        servers = await until(lambda: _in_state(client, "remote", "needs login"), timeout=30)
        summary = await errlog.wait_for(r"^Started 1 child server\(s\): local", timeout=60)
        assert f"remote (needs login: run `codex-mcp-client login {protected}`)" in summary
        assert f"codex-mcp-client login {protected}" in servers["remote"]["last_error"]
        assert (await client.call_tool("local__echo", {"message": "on"})).text == "on"

        with pytest.raises(McpError) as refused:
            await client.call_tool("remote__echo", {"message": "x"}, retries=0)
        assert_needs_login(refused.value, protected)

        # Not restarted in a loop: its default backoff (0.5 s) has passed many times over.
        servers = await status(client)
        assert servers["remote"]["state"] == "needs login"
        assert servers["remote"]["restarts"] == 0
        assert not [line for line in errlog.lines if "remote: restarting" in line]

        # The user logs in; the running gateway's child comes up on its own.
        await log_in(protected, store)
        await until(lambda: _in_state(client, "remote", "ready"), timeout=30)
        assert (await client.call_tool("remote__echo", {"message": "in"}, retries=0)).text == "in"


@with_mock_server
async def test_a_call_after_the_login_starts_the_child_at_once_over_http(
    protected: str, tmp_path: Path
) -> None:
    config = login_config(tmp_path, protected)
    store = tmp_path / "oauth"
    log: list[str] = []
    process, url = launch_http_gateway(config, log=log, CODEX_MCP_OAUTH_DIR=str(store))
    base = url.rsplit("/mcp", 1)[0]
    try:
        async with Client.http(url, timeout=60) as client:
            await until(lambda: _in_state(client, "remote", "needs login"), timeout=30)
            with pytest.raises(McpError) as refused:
                await client.call_tool("remote__echo", {"message": "x"}, retries=0)
            assert_needs_login(refused.value, protected)

            async with aiohttp.ClientSession() as http:
                async with http.get(f"{base}/") as page:
                    assert page.status == 200
                    assert 'data-child="remote" data-state="needs login"' in await page.text()
                assert await _children_gauge(http, base, "needs login") == 1
                assert await _children_gauge(http, base, "restarting") == 0

                # A call right after the login does not wait for the store's next look.
                await log_in(protected, store)
                result = await client.call_tool("remote__echo", {"message": "in"}, retries=0)
                assert result.text == "in"
                assert (await status(client))["remote"]["state"] == "ready"
                assert await _children_gauge(http, base, "needs login") == 0
    finally:
        stop(process)
    assert not [line for line in log if "remote: restarting" in line], log


@with_mock_server
async def test_lint_uses_the_stored_login(protected: str, tmp_path: Path) -> None:
    store = tmp_path / "oauth"
    code, out = await _lint(protected, store)
    assert code == 1
    assert f"needs login: run `codex-mcp-client login {protected}`" in out, out
    assert "401" not in out.replace(protected, "")  # no status code (the port may hold one)

    await log_in(protected, store)
    code, out = await _lint(protected, store)
    assert code == 0, out
    assert "echo" in out and "needs login" not in out


async def _lint(url: str, store: Path) -> tuple[int, str]:
    process = await asyncio.create_subprocess_exec(
        PY, CMD_MCP, "lint", url,
        env=gateway_env(None, CODEX_MCP_OAUTH_DIR=str(store)),
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
    )  # fmt: skip
    out, _ = await asyncio.wait_for(process.communicate(), 60)
    return await process.wait(), out.decode()


async def _in_state(client: Client, name: str, state: str) -> dict[str, Any] | None:
    servers = await status(client)
    return servers if servers[name]["state"] == state else None


async def _children_gauge(http: aiohttp.ClientSession, base: str, state: str) -> float:
    async with http.get(f"{base}/metrics") as reply:
        text = await reply.text()
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            if sample.name == "codex_mcp_gateway_children" and sample.labels == {"state": state}:
                return sample.value
    return 0.0


class RevokingFake(OAuthFake):
    """An OAuth server that, once `revoking`, revokes each token it is shown (its refresh
    token with it): the gateway's refresh is refused, and it writes the store doing so."""

    revoking = False

    async def mcp(self, request: web.Request) -> web.Response:
        if self.revoking:
            self.tokens.pop(request.headers.get("Authorization", "").removeprefix("Bearer "), None)
        return await super().mcp(request)


async def test_a_revoked_login_needs_a_login_and_is_not_tried_in_a_loop(
    aiohttp_server: Any, tmp_path: Path
) -> None:
    """The kept login is revoked: the gateway's own refresh is refused and drops the tokens
    from the store (so changes its file); that write must not start it again and again."""
    fake = RevokingFake()
    server = await aiohttp_server(fake.app(), host="127.0.0.1")
    url = str(server.make_url("/mcp"))
    store = tmp_path / "oauth"
    auth = OAuth(store=TokenStore(store), authorizer=ReadRedirect())
    async with Client.http(url, auth=auth) as client:
        await client.list_tools()
    fake.revoking = True

    config = write_config(tmp_path, {"remote": {"url": url}})
    async with gateway(config, env={"CODEX_MCP_OAUTH_DIR": str(store)}) as client:
        await until(lambda: _in_state(client, "remote", "needs login"), timeout=30)
        asked = len(fake.log)
        # Three of the store's looks (one a second) later: asked nothing more.
        deadline = asyncio.get_running_loop().time() + 3.5
        while asyncio.get_running_loop().time() < deadline:
            servers = await status(client)
            assert servers["remote"]["state"] == "needs login", servers["remote"]
            await asyncio.sleep(0.25)
        # A call is refused at once, and without the store changed asks the server nothing.
        with pytest.raises(McpError) as refused:
            await client.call_tool("remote__whoami", {}, retries=0)
        assert_needs_login(refused.value, url)
        assert len(fake.log) == asked, fake.log[asked:]
    assert "token:refresh_token" in fake.log and "invalid_grant" in fake.log


class OpeningFake(OAuthFake):
    """An OAuth server whose /mcp, once `open`, wants no token at all."""

    open = False

    async def mcp(self, request: web.Request) -> web.Response:
        if self.open:
            self.tokens.setdefault("", "")  # no Authorization header: the empty token
        return await super().mcp(request)


async def test_sighup_tries_a_child_that_needs_a_login_at_once(
    aiohttp_server: Any, tmp_path: Path
) -> None:
    """The store is unchanged, but the operator fixed the server (it wants no login any
    more) and says so with SIGHUP: the child is tried again then, not never."""
    fake = OpeningFake()
    server = await aiohttp_server(fake.app(), host="127.0.0.1")
    url = str(server.make_url("/mcp"))
    config = write_config(tmp_path, {"remote": {"url": url}})
    process, gateway_url = launch_http_gateway(config, CODEX_MCP_OAUTH_DIR=str(tmp_path / "o"))
    try:
        async with Client.http(gateway_url, timeout=60) as client:
            await until(lambda: _in_state(client, "remote", "needs login"), timeout=30)
            fake.open = True
            process.send_signal(signal.SIGHUP)
            servers = await until(lambda: _in_state(client, "remote", "ready"), timeout=30)
            assert servers["remote"]["restarts"] == 0
            assert (await client.call_tool("remote__whoami", {}, retries=0)).text == "token "
    finally:
        stop(process)


async def test_a_login_lost_while_up_needs_a_login_then_comes_back(
    aiohttp_server: Any, tmp_path: Path
) -> None:
    """The child is up when its login is revoked: the call that finds out fails saying
    what to run, the child is `needs login` (not restarted), and a new login brings it
    back in the running gateway."""
    fake = RevokingFake()
    server = await aiohttp_server(fake.app(), host="127.0.0.1")
    url = str(server.make_url("/mcp"))
    store = tmp_path / "oauth"

    async def log_in_here() -> None:
        auth = OAuth(store=TokenStore(store), authorizer=ReadRedirect())
        async with Client.http(url, auth=auth) as client:
            await client.list_tools()

    await log_in_here()
    config = write_config(tmp_path, {"remote": {"url": url}})
    async with gateway(config, env={"CODEX_MCP_OAUTH_DIR": str(store)}) as client:
        await until(lambda: _in_state(client, "remote", "ready"), timeout=30)
        fake.revoking = True
        with pytest.raises(McpError) as refused:
            await client.call_tool("remote__whoami", {}, retries=0)
        assert_needs_login(refused.value, url)
        servers = await until(lambda: _in_state(client, "remote", "needs login"), timeout=10)
        assert servers["remote"]["restarts"] == 0
        assert "remote__whoami" not in [t.name for t in await client.list_tools(cache=False)]

        fake.revoking = False
        await log_in_here()
        await until(lambda: _in_state(client, "remote", "ready"), timeout=30)
        token = (await client.call_tool("remote__whoami", {}, retries=0)).text
        assert token.removeprefix("token ") in fake.tokens


class TaskMakingFake(RevokingFake):
    """A 2025-11-25 server over OAuth whose one tool runs only as a task: it makes the task,
    then starts revoking the login, so the gateway's tasks/result for it is refused."""

    async def mcp(self, request: web.Request) -> web.Response:
        if request.method != "POST" or self.revoking:
            return await super().mcp(request)
        token = request.headers.get("Authorization", "").removeprefix("Bearer ")
        message = json.loads(await request.read())
        if token not in self.tokens or "id" not in message:
            return await super().mcp(request)  # its body is read again from aiohttp's copy
        method, result = message["method"], {}
        if method == "initialize":
            result = {
                "protocolVersion": message["params"]["protocolVersion"],
                "capabilities": {"tools": {}, "tasks": {"requests": {"tools": {"call": {}}}}},
                "serverInfo": {"name": "tasks", "version": "1"},
            }
        elif method == "tools/list":
            tool = {"name": "slow", "inputSchema": {"type": "object"}}
            result = {"tools": [{**tool, "execution": {"taskSupport": "required"}}]}
        elif method == "tools/call":
            task = {"taskId": "t-1", "status": "working", "createdAt": "2026-01-01T00:00:00Z"}
            result = {"task": {**task, "lastUpdatedAt": task["createdAt"], "ttl": 60_000}}
            self.revoking = True  # from its next request on, the login is gone
        return web.json_response({"jsonrpc": "2.0", "id": message["id"], "result": result})


async def test_a_login_lost_on_a_tasks_result_needs_a_login(
    aiohttp_server: Any, tmp_path: Path
) -> None:
    """The gateway follows a task-required tool's task for a plain call: the child refuses
    its tasks/result for want of a login. That is handled as on tools/call: the call fails
    saying what to run, and the child is `needs login` (it stayed `ready` before)."""
    fake = TaskMakingFake()
    server = await aiohttp_server(fake.app(), host="127.0.0.1")
    url = str(server.make_url("/mcp"))
    store = tmp_path / "oauth"
    auth = OAuth(store=TokenStore(store), authorizer=ReadRedirect())
    async with Client.http(url, auth=auth) as client:
        await client.list_tools()
    config = write_config(tmp_path, {"remote": {"url": url}})
    async with gateway(config, env={"CODEX_MCP_OAUTH_DIR": str(store)}) as client:
        await until(lambda: _in_state(client, "remote", "ready"), timeout=30)
        with pytest.raises(McpError) as refused:
            await client.call_tool("remote__slow", {}, retries=0)
        assert_needs_login(refused.value, url)
        await until(lambda: _in_state(client, "remote", "needs login"), timeout=10)
