"""What one client of an HTTP gateway can never get of another's (issue 18): a 2026-07-28
caller's per-session children are its credential's, not every modern caller's; what a
shared stdio child sends outside any call reaches no session; and per-session children are
capped by the machine and shared out per credential, the excess refused retryably.

All over real transports: `codex-mcp-http` serving the gateway as a subprocess, real child
processes, our client over real sockets."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from codex_mcp.client import Client, McpError
from codex_mcp.core.jsonrpc import JsonObject
from codex_mcp.gateway.routing.sessions import default_session_children

from .gateway_helpers import (
    BROKEN,
    STATEFUL,
    alive,
    launch_http_gateway,
    status,
    stdio,
    stop,
    until,
    write_config,
)

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Linux /proc")
MODERN = "2026-07-28"


@pytest.fixture
def serve(tmp_path: Path) -> Iterator[Any]:
    """`serve(servers, *args, env={...}, **top)`: the gateway of `servers` over HTTP, with
    `env` set; its URL and pid."""
    processes = []

    def start(
        servers: dict[str, Any], *args: str, env: dict[str, str] | None = None, **top: Any
    ) -> tuple[str, int]:
        config = write_config(tmp_path, servers, **top)
        process, url = launch_http_gateway(config, *args, **(env or {}))
        processes.append(process)
        return url, process.pid

    yield start
    for process in processes:
        stop(process)


@pytest.fixture
def tokens(tmp_path: Path) -> str:
    path = tmp_path / "tokens"
    path.write_text("token-a\ntoken-b\n")
    return str(path)


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def children_of(pid: int) -> list[int]:
    """The live processes whose parent is `pid` (Linux /proc)."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except (FileNotFoundError, ProcessLookupError, IndexError):
                continue
            if int(fields[1]) == pid and fields[0] != "Z":
                found.append(int(entry.name))
    return found


async def _pid(client: Client) -> int:
    result = await client.call_tool("state__pid", {}, retries=0)
    assert result.structured_content is not None, result.text
    return int(result.structured_content["result"])


# -- 2026-07-28 callers: children by credential ----------------------------------------------


@pytest.mark.slow
async def test_a_2026_07_28_callers_children_are_its_credentials_alone(
    serve: Any, tokens: str
) -> None:
    url, _ = serve({"state": stdio(STATEFUL, per_session=True)}, "--bearer-token-file", tokens)
    async with Client.http(url, mode=MODERN, headers=bearer("token-a")) as a:
        await a.call_tool("state__remember", {"value": "secret-of-A"}, retries=0)
        pid_a = await _pid(a)
    async with Client.http(url, mode=MODERN, headers=bearer("token-b")) as b:
        recalled = await b.call_tool("state__recall", {}, retries=0)
        assert "secret-of-A" not in recalled.text
        assert await _pid(b) != pid_a
    # The same credential on a new connection: the same children (it has no session).
    async with Client.http(url, mode=MODERN, headers=bearer("token-a")) as again:
        assert "secret-of-A" in (await again.call_tool("state__recall", {}, retries=0)).text
        assert await _pid(again) == pid_a


@pytest.mark.slow
async def test_a_callers_children_stop_when_it_goes_idle_and_free_their_slot(
    serve: Any, tokens: str
) -> None:
    url, _ = serve(
        {"state": stdio(STATEFUL, per_session=True)},
        "--bearer-token-file",
        tokens,
        gateway={"max_session_children": 1, "principal_idle_sec": 1},
    )
    async with Client.http(url, mode=MODERN, headers=bearer("token-a")) as a:
        pid_a = await _pid(a)
    await until(lambda: not alive(pid_a), timeout=20)
    async with Client.http(url, mode=MODERN, headers=bearer("token-b")) as b:

        async def pid_once_the_slot_is_free() -> int | None:
            try:
                return await _pid(b)
            except McpError as refused:  # A's child is still stopping: retry, as told
                assert refused.data["retryable"] is True, refused.message
                return None

        pid_b = await until(pid_once_the_slot_is_free, timeout=20)
        assert pid_b != pid_a and alive(pid_b)


@pytest.mark.slow
async def test_a_caller_whose_call_waits_on_its_childs_listing_is_not_idle(serve: Any) -> None:
    """principal_idle_sec runs from a caller's last request, but a caller whose call waits on
    its child's tools/list (a slow child, or a loaded machine) is not idle: before, its
    children were stopped under the call (1 failure in a full suite run on a loaded machine:
    "the handler was cancelled")."""
    url, _ = serve(
        {"brk": stdio(BROKEN, "--tools", "echo", "--slow-list", "2.5", per_session=True)},
        gateway={"principal_idle_sec": 1},
    )
    async with Client.http(url, mode=MODERN) as client:
        assert (await client.call_tool("brk__echo", {"message": "hi"}, retries=0)).text == "hi"


async def test_a_callers_child_list_changed_goes_out_on_no_call_stream(serve: Any) -> None:
    url, _ = serve({"dyn": stdio(BROKEN, "--tools", "echo,add_tool", per_session=True)})
    heard: list[str] = []
    options: dict[str, Any] = {"mode": MODERN, "on_notification": lambda m, _p: heard.append(m)}
    async with Client.http(url, **options) as client:
        assert (await client.call_tool("dyn__echo", {"message": "hi"}, retries=0)).text == "hi"
        assert (await client.call_tool("dyn__add_tool", {}, retries=0)).text == "added"

        async def listed() -> bool:  # its next listing has it, once the child relisted
            client.invalidate_cache()
            return "dyn__added" in [tool.name for tool in await client.list_tools()]

        await until(listed, timeout=20)
    assert not [method for method in heard if method.endswith("list_changed")], heard


# -- a shared stdio child: what no call claims reaches no session -----------------------------


async def test_a_shared_childs_message_tied_to_no_call_reaches_no_other_session(
    serve: Any,
) -> None:
    """A schedules background work on the shared child; B's call is the only one in flight
    when the child does it (a log line, an elicitation): neither goes to B."""
    url, _ = serve({"brk": stdio(BROKEN, "--tools", "background,hold")})
    asked: list[JsonObject] = []
    logs: list[Any] = []

    def elicit(params: JsonObject) -> JsonObject:
        asked.append(params)
        return {"action": "accept", "content": {"password": "B's"}}

    b_options: dict[str, Any] = {
        "elicitation_handler": elicit,
        "logging_handler": lambda params: logs.append(params["data"]),
    }
    async with Client.http(url) as a, Client.http(url, **b_options) as b:
        await a.call_tool("brk__background", {"message": "A: your password?"}, retries=0)
        held = await b.call_tool("brk__hold", {}, retries=0)
        # The child was told no: the gateway cannot tell whose it is.
        assert held.text.startswith("error: elicitation/create"), held.text
        assert "per_session" in held.text
        assert asked == [] and "A: your password?" not in logs
        status = await b.call_tool("gateway_status", {}, retries=0)
        assert status.structured_content is not None
        (server,) = status.structured_content["servers"]
        assert server["unrouted_messages"] == 2  # the log line and the elicitation
        assert '"per_session": true' in server["advice"]
        assert '"per_session": true' in status.text


# -- caps ------------------------------------------------------------------------------------


def _silent() -> dict[str, Any]:
    """A per-session child that is a real process and never answers (cheap: `sleep`): it
    holds its slot while it starts."""
    return stdio(
        ["sleep", "600"], per_session=True, startup_timeout_sec=600, tools_list_timeout_sec=0.1
    )


#: A listing waits no longer for a child in its first start than its list timeout.
NO_STARTUP_WAIT = {"WRAPPER_STARTUP_BUDGET_MS": "0"}


@pytest.mark.slow
async def test_without_a_configured_cap_the_machine_sets_one(serve: Any) -> None:
    cap = default_session_children()
    assert 2 <= cap <= 8 * len(os.sched_getaffinity(0))
    url, gateway_pid = serve({"idle": _silent()}, env=NO_STARTUP_WAIT)
    clients = [Client.http(url) for _ in range(cap + 1)]
    try:
        for client in clients:
            await client.connect()
        for client in clients[:cap]:
            with pytest.raises(McpError, match="the server is starting"):
                await client.call_tool("idle__x", {}, retries=0)
        await until(lambda: len(children_of(gateway_pid)) >= cap + 1)  # + the watchdog
        with pytest.raises(McpError) as refused:
            await clients[cap].call_tool("idle__x", {}, retries=0)
        assert f"too many per-session child servers: {cap} are running" in refused.value.message
        assert refused.value.data["retryable"] is True
        assert len(children_of(gateway_pid)) == cap + 1
        status = await clients[0].call_tool("gateway_status", {}, retries=0)
        assert status.structured_content is not None
        assert status.structured_content["max_session_children"] == cap
    finally:
        for client in clients:
            await client.aclose()


async def test_one_credential_gets_its_share_of_the_cap(serve: Any, tokens: str) -> None:
    url, _ = serve(
        {"idle": _silent()},
        "--bearer-token-file",
        tokens,
        env=NO_STARTUP_WAIT,
        gateway={"max_session_children": 4},
    )
    a = [Client.http(url, headers=bearer("token-a")) for _ in range(3)]
    b = Client.http(url, headers=bearer("token-b"))
    try:
        for client in [*a, b]:
            await client.connect()
        for client in a[:2]:  # the share: half the cap
            with pytest.raises(McpError, match="the server is starting"):
                await client.call_tool("idle__x", {}, retries=0)
        with pytest.raises(McpError) as refused:
            await a[2].call_tool("idle__x", {}, retries=0)
        message = refused.value.message
        assert "too many per-session child servers for this credential: 2 are running" in message
        assert "max_session_children_per_principal" in message
        assert refused.value.data["retryable"] is True
        with pytest.raises(McpError, match="the server is starting"):  # B still has room
            await b.call_tool("idle__x", {}, retries=0)
    finally:
        for client in [*a, b]:
            await client.aclose()


async def test_a_reloaded_config_stops_removed_per_session_children_and_applies_its_caps(
    serve: Any, tmp_path: Path
) -> None:
    echo = stdio(BROKEN, "--tools", "echo", per_session=True)
    url, _ = serve({"a": echo, "b": echo}, gateway={"max_session_children": 4})
    async with Client.http(url) as first, Client.http(url) as second:
        assert (await first.call_tool("a__echo", {"message": "a"}, retries=0)).text == "a"
        assert (await first.call_tool("b__echo", {"message": "b"}, retries=0)).text == "b"
        before = await status(first)
        write_config(tmp_path, {"b": echo}, gateway={"max_session_children": 1})
        await until(lambda: not alive(before["a"]["pid"]), timeout=20)  # a is gone
        assert (await first.call_tool("b__echo", {"message": "still"}, retries=0)).text == "still"
        assert (await status(first))["b"]["pid"] == before["b"]["pid"]
        first.invalidate_cache()
        assert [tool.name for tool in await first.list_tools()] == ["b__echo", "gateway_status"]
        with pytest.raises(McpError) as refused:  # the new cap: one child, first's
            await second.call_tool("b__echo", {"message": "no room"}, retries=0)
        assert "too many per-session child servers: 1 are running" in refused.value.message
