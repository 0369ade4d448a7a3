"""Per-session children over HTTP: `codex-mcp-http` serving the gateway, where a child marked
`per_session` is started for each client session that needs it, so a stdio server with state
in its process serves many clients in isolation; its child stops when the session is deleted
or expires; and a cap on live children refuses more with a clear error."""

from __future__ import annotations

import os
import signal
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from codex_mcp.client import Client, McpError, StreamableHttpTransport

from .gateway_helpers import (
    BROKEN,
    STATEFUL,
    alive,
    launch_http_gateway,
    stdio,
    stop,
    until,
    write_config,
)

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Linux /proc")


@pytest.fixture
def serve(tmp_path: Path) -> Iterator[object]:
    processes = []

    def start(*args: str, log: list[str] | None = None, lazy: bool = False, **top: object) -> str:
        servers = {
            "state": stdio(STATEFUL, per_session=True),
            "shared": stdio(BROKEN, "--tools", "echo"),
        }
        if lazy:  # a shared child started at its first call
            servers["later"] = stdio(STATEFUL, lazy=True)
        config = write_config(tmp_path, servers, **top)
        process, url = launch_http_gateway(config, *args, log=log)
        processes.append(process)
        return url

    yield start
    for process in processes:
        stop(process)


async def _pid(client: Client) -> int:
    result = await client.call_tool("state__pid", {}, retries=0)
    assert result.structured_content is not None
    return int(result.structured_content["result"])


@pytest.mark.slow
async def test_each_session_has_its_own_child_until_it_is_deleted(serve: object) -> None:
    url = serve()  # type: ignore[operator]
    a, b = Client.http(url), Client.http(url)
    await a.connect()
    await b.connect()
    try:
        names = [tool.name for tool in await a.list_tools()]
        assert names == [
            "state__remember",
            "state__recall",
            "state__pid",
            "shared__echo",
            "gateway_status",
        ]
        await a.call_tool("state__remember", {"value": "from a"})
        await b.call_tool("state__remember", {"value": "from b"})
        assert (await a.call_tool("state__recall", {})).text == "from a"
        assert (await b.call_tool("state__recall", {})).text == "from b"
        pid_a, pid_b = await _pid(a), await _pid(b)
        assert pid_a != pid_b and alive(pid_a) and alive(pid_b)
        assert (await a.call_tool("shared__echo", {"message": "one for all"})).text == "one for all"
    finally:
        await a.aclose()  # DELETE: the session ends, and its child with it
    await until(lambda: not alive(pid_a), timeout=15)
    assert alive(pid_b)
    assert (await b.call_tool("state__recall", {})).text == "from b"
    await b.aclose()
    await until(lambda: not alive(pid_b), timeout=15)


@pytest.mark.slow
async def test_a_sessions_child_stops_when_the_session_expires(serve: object) -> None:
    url = serve("--session-ttl", "1")  # type: ignore[operator]
    # No GET stream: it would keep the session busy, and a busy session never expires.
    client = Client(StreamableHttpTransport(url, get_stream=False))
    await client.connect()
    try:
        pid = await _pid(client)
        await until(lambda: not alive(pid), timeout=20)
    finally:
        await client.session.aclose()


@pytest.mark.slow
async def test_a_cap_on_live_children_refuses_with_a_clear_error(serve: object) -> None:
    url = serve(gateway={"max_session_children": 1})  # type: ignore[operator]
    first, second = Client.http(url), Client.http(url)
    await first.connect()
    await second.connect()
    try:
        pid = await _pid(first)
        assert [t.name for t in await second.list_tools()] == ["shared__echo", "gateway_status"]
        with pytest.raises(McpError) as caught:
            await second.call_tool("state__pid", {}, retries=0)
        assert "too many per-session child servers: 1 are running" in caught.value.message
        assert caught.value.data["retryable"] is True
        assert caught.value.data["serverName"] == "state"
        assert (await second.call_tool("shared__echo", {"message": "still"})).text == "still"
    finally:
        await first.aclose()
    await until(lambda: not alive(pid), timeout=15)
    # A slot is free: the second session gets its child on its next need.
    assert await _pid(second) != pid
    await second.aclose()


async def test_a_sessions_childs_lines_name_the_session_and_a_shared_childs_none(
    serve: object,
) -> None:
    """A per-session child that dies is logged naming its session; a shared child started
    by a session's call (lazy) serves every session, so its lines name none."""
    log: list[str] = []
    url = serve(log=log, lazy=True)  # type: ignore[operator]
    client = Client.http(url)
    await client.connect()

    def stopped(child: str) -> str | None:
        return next((line for line in log if f" {child}: " in line and "SIGKILL" in line), None)

    try:
        session_id = client.transport.session_id  # type: ignore[attr-defined]
        assert session_id
        shared = await client.call_tool("later__pid", {}, retries=0)
        assert shared.structured_content is not None
        for pid in (await _pid(client), int(shared.structured_content["result"])):
            os.kill(pid, signal.SIGKILL)  # children this test's gateway started
        await until(lambda: bool(stopped("state") and stopped("later")), timeout=15)
    finally:
        await client.aclose()
    assert f"[session {session_id[:8]}] state: " in str(stopped("state")), log
    assert "[session" not in str(stopped("later")), log
