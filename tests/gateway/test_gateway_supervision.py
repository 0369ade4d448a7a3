"""Supervision, with real processes and real signals: a child killed mid-call fails that call
at once with a retryable error and comes back with its tools; a gateway killed with SIGKILL
leaves no child (nor a child's child) running."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from codex_mcp.client import McpError
from support.polling import until_sync

from .gateway_helpers import (
    BROKEN,
    CMD_MCP,
    PY,
    Lines,
    alive,
    gateway,
    gateway_env,
    group_members,
    status,
    stdio,
    until,
    write_config,
)

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Linux /proc")


async def test_a_child_killed_mid_call_fails_the_call_fast_and_comes_back(tmp_path: Path) -> None:
    config = write_config(
        tmp_path,
        {"brk": stdio(BROKEN, "--tools", "echo,slow", restart={"backoff_initial_sec": 0.2})},
    )
    errlog = Lines()
    changed = asyncio.Event()
    client = gateway(config, errlog=errlog, env={"DEBUG": "1"})
    client.session.notification_handlers.append(
        lambda method, _p: method == "notifications/tools/list_changed" and changed.set()
    )
    async with client:
        assert {t.name for t in await client.list_tools()} == {
            "brk__echo",
            "brk__slow",
            "gateway_status",
        }
        first_pid = (await status(client))["brk"]["pid"]
        call = asyncio.ensure_future(
            client.call_tool("brk__slow", {"seconds": 60}, retries=0, timeout=60)
        )
        await errlog.wait_for(r"slow: started")  # the child's stderr, relayed by DEBUG=1
        os.kill(first_pid, signal.SIGKILL)
        killed = time.monotonic()
        with pytest.raises(McpError) as caught:
            await call
        assert time.monotonic() - killed < 10  # at once, not at the call's 60 s timeout
        assert caught.value.data["retryable"] is True
        assert caught.value.data["kind"] == "server_error"
        assert caught.value.data["serverName"] == "brk"
        assert "SIGKILL" in caught.value.message

        await asyncio.wait_for(changed.wait(), 10)  # its tools went away (or came back)

        async def back() -> bool:
            servers = await status(client)
            return servers["brk"]["state"] == "ready" and servers["brk"]["tools"] == 2

        await until(back, timeout=20, every=0.1)
        servers = await status(client)
        assert servers["brk"]["restarts"] == 1
        assert servers["brk"]["pid"] != first_pid and not alive(first_pid)
        assert "SIGKILL" in servers["brk"]["last_error"]
        assert {t.name for t in await client.list_tools(cache=False)} >= {"brk__echo", "brk__slow"}
        assert (await client.call_tool("brk__echo", {"message": "back"})).text == "back"


async def test_restart_never_leaves_a_dead_child_down(tmp_path: Path) -> None:
    config = write_config(
        tmp_path, {"brk": stdio(BROKEN, "--tools", "echo,crash", restart="never")}
    )
    async with gateway(config) as client:
        with pytest.raises(McpError) as caught:
            await client.call_tool("brk__crash", {}, retries=0)
        assert caught.value.data["retryable"] is True

        async def down() -> bool:
            return (await status(client))["brk"]["state"] == "failed"

        await until(down, timeout=10)
        assert [t.name for t in await client.list_tools(cache=False)] == ["gateway_status"]
        with pytest.raises(McpError) as caught:
            await client.call_tool("brk__echo", {"message": "x"}, retries=0)
        assert caught.value.data["retryable"] is False
        assert "exited with code 3" in caught.value.message


def test_no_child_outlives_a_gateway_killed_with_sigkill(tmp_path: Path) -> None:
    # One child runs a grandchild in its process group (as npx runs node): both must go.
    wrapper = f"sleep 300 & exec {PY} {BROKEN[1]} --tools echo"
    config = write_config(
        tmp_path,
        {
            "plain": stdio(BROKEN, "--tools", "echo"),
            "wrapped": {"command": "/bin/sh", "args": ["-c", wrapper]},
        },
    )
    gateway_process = subprocess.Popen(
        [PY, CMD_MCP],
        env=gateway_env(config),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    try:
        servers = _status_over_raw_pipes(gateway_process)
        pids = [servers["plain"]["pid"], servers["wrapped"]["pid"]]
        processes = [member for pid in pids for member in group_members(pid)]
        assert len(processes) >= 3, processes  # two children and the grandchild sleep
        gateway_process.send_signal(signal.SIGKILL)
        gateway_process.wait(10)
        until_sync(
            lambda: not any(alive(pid) for pid in processes),
            10,
            lambda: f"still alive: {[pid for pid in processes if alive(pid)]}",
        )
    finally:
        if gateway_process.poll() is None:
            gateway_process.kill()
            gateway_process.wait()


def _status_over_raw_pipes(process: subprocess.Popen[str]) -> dict[str, dict[str, object]]:
    """initialize, then gateway_status, as a client on raw pipes would."""
    assert process.stdin is not None and process.stdout is not None
    messages = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
        {"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "gateway_status", "arguments": {}}},
    ]  # fmt: skip
    for message in messages:
        process.stdin.write(json.dumps(message) + "\n")
        process.stdin.flush()
        if "id" in message:
            while True:
                answer = json.loads(process.stdout.readline())
                if answer.get("id") == message["id"]:
                    break
    return {s["name"]: s for s in answer["result"]["structuredContent"]["servers"]}


def test_the_kernel_kills_a_child_whose_parent_is_sigkilled() -> None:
    # A parent that spawns `sleep` the way the gateway spawns children (no watchdog here),
    # then waits to be killed: its child must not survive it.
    parent_code = (
        "import subprocess, sys, time\n"
        "from codex_mcp.gateway.children.lifetime import die_with_parent\n"
        "child = subprocess.Popen(['sleep', '300'], preexec_fn=die_with_parent(),"
        " start_new_session=True)\n"
        "print(child.pid, flush=True)\n"
        "time.sleep(300)\n"
    )
    parent = subprocess.Popen([PY, "-c", parent_code], stdout=subprocess.PIPE, text=True)
    assert parent.stdout is not None
    child = int(parent.stdout.readline())
    try:
        assert alive(child)
        parent.send_signal(signal.SIGKILL)
        parent.wait(10)
        until_sync(lambda: not alive(child), 5, f"child {child} still alive", every=0.02)
    finally:
        if alive(child):
            os.kill(child, signal.SIGKILL)
