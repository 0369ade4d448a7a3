"""Operator bounds for `--serve codex` (specs/codex-tools.md, "Operator bounds"): a caller
with a valid credential asks for more of the host than the operator allows (a wider
sandbox, a laxer approval policy, a cwd outside the root by path, `..` or symlink, config
keys that swap the model provider, add MCP servers, open the shell environment or the
sandbox itself, or a config nested past any sense). Each gets an error result naming the
bound and the setting that raises it, and the app-server never hears of it: the real
Codex app-server's requests are recorded through the driver's connection seam, and the
fake model counts the turns. Calls within the bounds run as before, and omitted values get
the bounds. Over HTTP (in this loop, and a real `codex-mcp-http` with OAuth scopes) and
over stdio (a real `codex-mcp` with the bound flags)."""

from __future__ import annotations

import dataclasses
import os
import subprocess
import sys
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from codex_mcp.client import Client
from codex_mcp.codex.binary import find_codex
from codex_mcp.codex.bounds import CodexBounds, bounds_from_settings
from codex_mcp.codex.connection import (
    CloseCallback,
    NotificationCallback,
    RequestHandler,
    StdioConnection,
)
from codex_mcp.codex.driver import CodexDriver
from codex_mcp.codex.provider import CodexProvider
from codex_mcp.core.jsonrpc import JsonObject
from codex_mcp.core.server import ServerCore
from codex_mcp.settings import HttpDefaults
from codex_mcp.transports.http import HttpConfig, create_app
from interop import fake_responses_provider as fake
from interop.fake_responses_provider import FakeProvider

from .conftest import ROOT, codex_env, needs_codex
from .raw_http import open_session

pytestmark = [pytest.mark.interop, needs_codex]

#: A shared server's settings (listening beyond loopback): the safe defaults apply. Only
#: read by bounds_from_settings; nothing listens there.
SHARED = dataclasses.replace(HttpDefaults(), host="0.0.0.0")


class RecordingConnection:
    """The driver's app-server connection, passing everything through and keeping every
    request we send app-server (method, params): what app-server was asked."""

    def __init__(self, inner: StdioConnection, sent: list[tuple[str, JsonObject]]) -> None:
        self.inner = inner
        self.sent = sent

    @property
    def pid(self) -> int | None:
        return self.inner.pid

    async def request(
        self, method: str, params: JsonObject | None = None, timeout: float | None = None
    ) -> JsonObject:
        self.sent.append((method, params or {}))
        return await self.inner.request(method, params, timeout)

    async def notify(self, method: str, params: JsonObject | None = None) -> None:
        self.sent.append((method, params or {}))
        await self.inner.notify(method, params)

    def on_notification(self, callback: NotificationCallback) -> None:
        self.inner.on_notification(callback)

    def handle_requests(self, method: str, handler: RequestHandler) -> None:
        self.inner.handle_requests(method, handler)

    def on_close(self, callback: CloseCallback) -> None:
        self.inner.on_close(callback)

    async def close(self) -> None:
        await self.inner.close()


class RecordingProvider(CodexProvider):
    """A CodexProvider whose app-servers are the real Codex, recorded."""

    def __init__(self, workdir: Path, **options: Any) -> None:
        super().__init__(**options)
        self.workdir = workdir
        self.sent: list[tuple[str, JsonObject]] = []

    async def _spawn(self) -> CodexDriver:
        env = {**os.environ, **self.env}
        binary = await find_codex(env)
        inner = StdioConnection([binary.path, "app-server"], env=env, cwd=self.workdir)
        await inner.start()
        driver = CodexDriver(RecordingConnection(inner, self.sent))
        try:
            await driver.start()
        except BaseException:
            await inner.close()
            raise
        return driver

    def thread_starts(self) -> list[JsonObject]:
        return [params for method, params in self.sent if method == "thread/start"]


Serve = Callable[[CodexBounds], Awaitable[tuple[str, RecordingProvider]]]


@pytest.fixture
async def serve(aiohttp_server: Any, codex_home: Path, workdir: Path) -> AsyncIterator[Serve]:
    async def start(bounds: CodexBounds) -> tuple[str, RecordingProvider]:
        provider = RecordingProvider(workdir, env=codex_env(codex_home), bounds=bounds)
        core = ServerCore(provider, name="codex-mcp-server", version="test")
        server = await aiohttp_server(
            create_app(core, HttpConfig(post_stream="header")), host="127.0.0.1"
        )
        return str(server.make_url("/mcp")), provider

    yield start


def hostile_calls(root: Path, outside: Path) -> dict[str, tuple[JsonObject, str]]:
    """Calls past a shared server's default bounds (root: the cwd root), and a word the
    refusal must name."""
    (root / "escape").symlink_to(outside, target_is_directory=True)
    deep: JsonObject = {"leaf": 1}
    for _ in range(200):
        deep = {"t": deep}
    return {
        "full-access sandbox": ({"sandbox": "danger-full-access"}, "--codex-max-sandbox"),
        "never ask": ({"approval-policy": "never"}, "--codex-max-approval-policy"),
        "cwd outside": ({"cwd": str(outside)}, "--codex-cwd-root"),
        "cwd /": ({"cwd": "/"}, "--codex-cwd-root"),
        "cwd with ..": ({"cwd": f"{root}/sub/../../"}, "'..'"),
        "relative ..": ({"cwd": "../.."}, "'..'"),
        "cwd by symlink": ({"cwd": str(root / "escape")}, "--codex-cwd-root"),
        "cwd with NUL": ({"cwd": f"{root}/a\x00b"}, "not a usable path"),
        "home": ({"cwd": "~"}, "--codex-cwd-root"),
        "model provider": (
            {"config": {"model_provider": "evil", "model_providers.evil.base_url": "x"}},
            "--codex-allow-config",
        ),
        "mcp server, nested": (
            {"config": {"mcp_servers": {"evil": {"command": "sh", "args": ["-c", "id"]}}}},
            "mcp_servers.evil.command",
        ),
        "shell environment, dotted": (
            {"config": {"shell_environment_policy.inherit": "all"}},
            "shell_environment_policy.inherit",
        ),
        "sandbox through config": (
            {"config": {"sandbox_mode": "danger-full-access"}},
            "--codex-allow-config",
        ),
        "approval through config": (
            {"config": {"approval_policy": "never"}},
            "--codex-allow-config",
        ),
        "profile": ({"config": {"profile": "unsafe"}}, "--codex-allow-config"),
        "empty key part": ({"config": {"a..b": 1}}, "empty part"),
        "config nested 200 deep": ({"config": deep}, "deeper"),
    }


async def test_calls_past_every_bound_are_refused_and_never_reach_app_server(
    serve: Serve, fake_model: tuple[FakeProvider, int], tmp_path: Path, workdir: Path
) -> None:
    model, _ = fake_model
    model.responder = fake.echo_prompt()
    outside = tmp_path / "outside"
    outside.mkdir()
    url, provider = await serve(bounds_from_settings(SHARED, cwd=str(workdir)))
    async with Client.http(url) as client:
        # Within the bounds first, so an app-server is running and listening.
        first = await client.call_tool("codex", {"prompt": "hello"}, timeout=60, retries=0)
        assert not first.is_error, first.text
        assert first.text == "You said: hello"
        sent_before, turns_before = list(provider.sent), len(model.requests)
        assert len(provider.thread_starts()) == 1

        calls = hostile_calls(workdir, outside)
        # A session's call, and the other entry to the same tools: a 2026-07-28 request.
        async with Client.http(url, mode="2026-07-28") as stateless:
            for caller in (client, stateless):
                for case, (arguments, named) in calls.items():
                    result = await caller.call_tool(
                        "codex", {"prompt": "pwn", **arguments}, timeout=30, retries=0
                    )
                    assert result.is_error, case
                    assert "refused" in result.text and named in result.text, (case, result.text)
                    assert result.structured_content is None, case  # no thread was made
        assert provider.running == 1  # the stateless caller's app-server was never started

        # app-server was asked nothing more, the model saw no other turn, and the
        # server still serves the caller.
        assert provider.sent == sent_before
        assert len(model.requests) == turns_before
        again = await client.call_tool("codex", {"prompt": "still here"}, timeout=60, retries=0)
        assert again.text == "You said: still here"


async def test_a_refused_call_starts_no_app_server(
    serve: Serve, fake_model: tuple[FakeProvider, int], workdir: Path
) -> None:
    model, _ = fake_model
    url, provider = await serve(bounds_from_settings(SHARED, cwd=str(workdir)))
    async with Client.http(url) as client:
        result = await client.call_tool(
            "codex", {"prompt": "pwn", "sandbox": "danger-full-access"}, timeout=30, retries=0
        )
    assert result.is_error
    assert "at most 'workspace-write'" in result.text
    assert "--codex-max-sandbox (CODEX_MCP_CODEX_MAX_SANDBOX)" in result.text
    assert provider.sent == [] and provider.running == 0 and model.requests == []


async def test_calls_within_the_bounds_run_and_omitted_values_get_the_bounds(
    serve: Serve, fake_model: tuple[FakeProvider, int], workdir: Path
) -> None:
    model, _ = fake_model
    model.responder = fake.echo_prompt()
    (workdir / "sub").mkdir()
    settings = dataclasses.replace(SHARED, codex_allow_config=("model_reasoning_effort",))
    bounds = bounds_from_settings(settings, cwd=str(workdir))
    [root] = bounds.base.cwd_roots or ()  # the working directory, resolved
    url, provider = await serve(bounds)
    async with Client.http(url) as client:
        omitted = await client.call_tool("codex", {"prompt": "plain"}, timeout=60, retries=0)
        within = await client.call_tool(
            "codex",
            {
                "prompt": "careful",
                "sandbox": "read-only",
                "approval-policy": "on-request",
                "cwd": str(workdir / "sub"),
                "config": {"model_reasoning_effort": "low"},
            },
            timeout=60,
            retries=0,
        )
        reply = await client.call_tool(
            "codex-reply",
            {"threadId": within.structured_content["threadId"], "prompt": "more"},  # type: ignore[index]
            timeout=60,
            retries=0,
        )
    assert (omitted.text, within.text, reply.text) == (
        "You said: plain",
        "You said: careful",
        "You said: more",
    )
    first, second = provider.thread_starts()
    # Omitted: the bounds themselves, not whatever CODEX_HOME/config.toml would pick.
    assert first["sandbox"] == "workspace-write"
    assert first["approvalPolicy"] == "on-request"
    assert first["cwd"] == str(root)
    assert "config" not in first
    assert second["sandbox"] == "read-only"
    assert second["cwd"] == str(root / "sub")
    assert second["config"] == {"model_reasoning_effort": "low"}


async def test_a_single_user_server_keeps_todays_behaviour(
    serve: Serve, fake_model: tuple[FakeProvider, int], tmp_path: Path
) -> None:
    """stdio, and loopback HTTP with no token or one: no bound unless the operator sets one."""
    model, _ = fake_model
    model.responder = fake.echo_prompt()
    bounds = bounds_from_settings(HttpDefaults())
    assert bounds.unbounded
    url, provider = await serve(bounds)
    async with Client.http(url) as client:
        result = await client.call_tool(
            "codex",
            {"prompt": "mine", "sandbox": "danger-full-access", "cwd": str(tmp_path)},
            timeout=60,
            retries=0,
        )
    assert result.text == "You said: mine", result.text
    [started] = provider.thread_starts()
    assert started["sandbox"] == "danger-full-access" and "approvalPolicy" not in started


# -- stdio: the flags of a real codex-mcp ----------------------------------------------
async def test_stdio_with_bound_flags_refuses_before_any_app_server(
    codex_home: Path, workdir: Path, fake_model: tuple[FakeProvider, int]
) -> None:
    model, _ = fake_model
    model.responder = fake.echo_prompt()
    log_file = workdir.parent / "server.log"
    command = [
        sys.executable,
        str(ROOT / "cmd/mcp"),
        "--serve",
        "codex",
        "--codex-max-sandbox",
        "read-only",
        "--codex-max-approval-policy",
        "on-request",
        "--codex-cwd-root",
        str(workdir),
        "--codex-allow-config",
        "model_reasoning_effort",
        "--log-file",
        str(log_file),
    ]
    async with Client.stdio(command, env=codex_env(codex_home), cwd=workdir) as client:
        for arguments, named in (
            ({"sandbox": "workspace-write"}, "--codex-max-sandbox"),
            ({"approval-policy": "never"}, "--codex-max-approval-policy"),
            ({"cwd": str(workdir.parent)}, "--codex-cwd-root"),
            ({"config": {"model_provider": "x"}}, "--codex-allow-config"),
        ):
            result = await client.call_tool(
                "codex", {"prompt": "pwn", **arguments}, timeout=30, retries=0
            )
            assert result.is_error and named in result.text, result.text
        # No app-server was ever started (the server logs each start), no model turn.
        assert "app-server started" not in log_file.read_text()
        assert model.requests == []
        fine = await client.call_tool(
            "codex",
            {"prompt": "ok", "sandbox": "read-only", "config": {"model_reasoning_effort": "low"}},
            timeout=60,
            retries=0,
        )
    assert fine.text == "You said: ok", fine.text
    assert "app-server started" in log_file.read_text()  # the check above can fail


@pytest.mark.parametrize(
    ("program", "flags", "says"),
    [
        ("mcp", ["--codex-scope-bounds", "admin=sandbox:everything"], "the kinds are"),
        ("mcp", ["--codex-scope-bounds", "admin=sandbox:read-only"], "is for codex-mcp-http"),
        ("http", ["--codex-scope-bounds", "admin=approval:never"], "needs --oauth-issuer"),
        ("mcp", ["--codex-cwd-root", "/no/such/dir"], "not a directory"),
        ("http", ["--codex-allow-config", "a..b"], "empty part"),
    ],
)
def test_a_wrong_bound_setting_stops_the_start_with_one_line(
    program: str, flags: list[str], says: str, tmp_path: Path
) -> None:
    port = ["--port", "0"] if program == "http" else []  # should it start after all
    done = subprocess.run(
        [sys.executable, str(ROOT / "cmd" / program), "--serve", "codex", *port, *flags],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
        cwd=tmp_path,
        env={**os.environ, "CODEX_HOME": str(tmp_path)},
    )
    assert done.returncode != 0
    assert done.stdout == ""
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and says in lines[0], done.stderr


# -- OAuth: a higher scope raises the bounds, and only for its token ----------------------
async def test_an_oauth_scope_raises_the_bounds_for_its_token_only(
    codex_home: Path, workdir: Path, fake_model: tuple[FakeProvider, int]
) -> None:
    sys.path.insert(0, str(ROOT / "tests/http"))
    from http_process import HttpProcess
    from oauth_helpers import AuthorizationServer

    model, _ = fake_model
    model.responder = fake.echo_prompt()
    issuer = AuthorizationServer()
    server = None
    try:
        server = HttpProcess(
            "--serve",
            "codex",
            "--oauth-issuer",
            issuer.issuer,
            "--codex-cwd-root",
            str(workdir),
            "--codex-scope-bounds",
            "codex.full=sandbox:danger-full-access approval:never config:model_reasoning_effort",
            env={**os.environ, **codex_env(codex_home)},
        )
        url = server.url
        plain = await issuer.token("client-plain", audience=url, scope="mcp")
        full = await issuer.token("client-full", audience=url, scope="mcp codex.full")
        wide = {
            "prompt": "wide",
            "sandbox": "danger-full-access",
            "approval-policy": "never",
            "config": {"model_reasoning_effort": "low"},
        }
        async with Client.http(url, headers={"Authorization": f"Bearer {plain}"}) as client:
            refused = await client.call_tool("codex", wide, timeout=30, retries=0)
            assert refused.is_error
            assert "a token with the OAuth scope codex.full may ask for it" in refused.text
            assert model.requests == []
            # The scope raises what it names, and nothing else.
            async with Client.http(url, headers={"Authorization": f"Bearer {full}"}) as raised:
                allowed = await raised.call_tool("codex", wide, timeout=60, retries=0)
                assert allowed.text == "You said: wide", allowed.text
                other = await raised.call_tool(
                    "codex", {"prompt": "x", "cwd": "/"}, timeout=30, retries=0
                )
                assert other.is_error and "--codex-cwd-root" in other.text
            assert len(model.requests) == 1
            # The plain token is still bound after the raised one ran.
            again = await client.call_tool("codex", wide, timeout=30, retries=0)
            assert again.is_error
        # Scopes are the request's, not the session's: a session opened with the scope,
        # then called with a token of the same subject without it, is bound again.
        narrowed = await issuer.token("client-full", audience=url, scope="mcp")
        async with aiohttp.ClientSession() as http:
            session = await open_session(http, url, extra={"Authorization": f"Bearer {full}"})
            call = {
                "jsonrpc": "2.0",
                "id": 2,
                "method": "tools/call",
                "params": {"name": "codex", "arguments": wide},
            }
            headers = {**session, "Authorization": f"Bearer {narrowed}"}
            async with http.post(url, json=call, headers=headers) as response:
                assert response.status == 200, await response.text()
                answer = await response.json()
            assert answer["result"]["isError"] is True
            assert "--codex-max-sandbox" in answer["result"]["content"][0]["text"]
        assert len(model.requests) == 1
    finally:
        if server is not None:
            server.stop()
        issuer.stop()
