"""The gateway's first tool list, which is the only one Codex 0.171 reads: every child's tools
are in it, from the child's last listing kept on disk while it starts, or by waiting for a
slow child within the startup budget; a child that misses it is named on stderr with the
setting that fixes it. Real gateway subprocesses, real (slow) children."""

from __future__ import annotations

import json
import os
import shlex
from pathlib import Path

import pytest
from codex_mcp.client import McpError

from .gateway_helpers import BROKEN, Lines, alive, gateway, status, stdio, until, write_config

SLOW_START = "3"  # seconds before the slow child answers initialize


def _names(tools: list[object]) -> list[str]:
    return [tool.name for tool in tools]  # type: ignore[attr-defined]


@pytest.mark.slow
async def test_the_last_listing_is_served_while_the_child_starts(tmp_path: Path) -> None:
    config = write_config(
        tmp_path,
        {"slow": stdio(BROKEN, "--tools", "echo,structured", "--slow-init", SLOW_START),
         "quick": stdio(BROKEN, "--tools", "echo")},
    )  # fmt: skip
    cache = Path(os.environ["XDG_CACHE_HOME"]) / "codex-mcp" / "listings"
    # First start: nothing cached; the first list waits for the slow child (the budget).
    async with gateway(config, env={"WRAPPER_INIT_TIMEOUT_MS": "0"}) as client:
        first = _names(await client.list_tools(cache=False))
        assert first == ["slow__echo", "slow__structured", "quick__echo", "gateway_status"]
    kept = [json.loads(path.read_text())["tools"] for path in cache.glob("*.json")]
    assert sorted(len(tools) for tools in kept) == [1, 2], kept

    # Next start: the first list comes from the cache while the child still starts, and a
    # call to it waits for it, then runs.
    env = {"WRAPPER_INIT_TIMEOUT_MS": "0", "WRAPPER_STARTUP_BUDGET_MS": "0"}
    async with gateway(config, env=env) as client:
        listed = _names(await client.list_tools(cache=False))
        assert (await status(client))["slow"]["state"] == "starting"  # not listed live
        assert listed == first
        result = await client.call_tool("slow__echo", {"message": "waited"}, retries=0)
        assert result.text == "waited", result
        assert (await status(client))["slow"]["state"] == "ready"


@pytest.mark.slow
async def test_a_changed_command_is_not_served_an_old_listing(tmp_path: Path) -> None:
    servers = {"slow": stdio(BROKEN, "--tools", "echo", "--slow-init", SLOW_START)}
    env = {"WRAPPER_INIT_TIMEOUT_MS": "0"}
    async with gateway(write_config(tmp_path, servers), env=env) as client:
        assert _names(await client.list_tools(cache=False)) == ["slow__echo", "gateway_status"]
    servers = {"slow": stdio(BROKEN, "--tools", "structured", "--slow-init", SLOW_START)}
    async with gateway(write_config(tmp_path, servers), env=env) as client:
        assert _names(await client.list_tools(cache=False)) == [
            "slow__structured",
            "gateway_status",
        ]


@pytest.mark.slow
async def test_a_child_past_the_budget_is_named_with_the_setting(tmp_path: Path) -> None:
    config = write_config(
        tmp_path,
        {"stuck": stdio(BROKEN, "--tools", "echo", "--slow-init", "60"),
         "quick": stdio(BROKEN, "--tools", "echo")},
    )  # fmt: skip
    errlog = Lines()
    env = {"WRAPPER_INIT_TIMEOUT_MS": "0", "WRAPPER_STARTUP_BUDGET_MS": "1000"}
    async with gateway(config, errlog=errlog, env=env) as client:
        assert _names(await client.list_tools(cache=False)) == ["quick__echo", "gateway_status"]
        line = await errlog.wait_for(r"stuck: still starting")
        assert "WRAPPER_STARTUP_BUDGET_MS (now 1000)" in line, line
        assert "startup_timeout_sec" in line, line


async def test_a_lazy_child_starts_at_its_first_call(tmp_path: Path) -> None:
    config = write_config(
        tmp_path,
        {"lazy": stdio(BROKEN, "--tools", "echo", lazy=True),
         "eager": stdio(BROKEN, "--tools", "echo")},
    )  # fmt: skip
    # Nothing kept yet: the first listing starts it, to learn its tools.
    async with gateway(config) as client:
        assert (await status(client))["lazy"]["state"] == "idle"
        first = _names(await client.list_tools(cache=False))
        assert first == ["lazy__echo", "eager__echo", "gateway_status"]
    # Its listing is kept: it is served, and the child starts at the first call only.
    async with gateway(config) as client:
        assert _names(await client.list_tools(cache=False)) == first
        servers = await status(client)
        assert servers["lazy"]["state"] == "idle" and servers["lazy"]["pid"] is None
        assert servers["eager"]["state"] == "ready"
        result = await client.call_tool("lazy__echo", {"message": "woken"}, retries=0)
        assert result.text == "woken"
        assert (await status(client))["lazy"]["state"] == "ready"


async def test_an_idle_child_is_stopped_and_started_again_by_a_call(tmp_path: Path) -> None:
    config = write_config(
        tmp_path, {"sleepy": stdio(BROKEN, "--tools", "echo", idle_timeout_sec=0.5)}
    )
    async with gateway(config) as client:
        assert (await client.call_tool("sleepy__echo", {"message": "a"})).text == "a"
        pid = (await status(client))["sleepy"]["pid"]
        assert pid is not None

        async def idle() -> bool:
            return (await status(client))["sleepy"]["state"] == "idle"

        await until(idle)
        await until(lambda: not alive(pid))
        assert _names(await client.list_tools(cache=False)) == ["sleepy__echo", "gateway_status"]
        assert (await client.call_tool("sleepy__echo", {"message": "b"}, retries=0)).text == "b"
        again = await status(client)
        assert again["sleepy"]["state"] == "ready" and again["sleepy"]["pid"] != pid


async def test_a_name_an_idle_child_never_listed_is_unknown_as_anywhere(tmp_path: Path) -> None:
    """Stopped for want of use, a child is not down: a tool its kept listing lacks is
    "Unknown tool" (-32602) as it is while the child is up (a policy's hidden name is
    refused so), not "the server is idle" (-32603), which told hidden from unknown."""
    config = write_config(
        tmp_path, {"sleepy": stdio(BROKEN, "--tools", "echo", idle_timeout_sec=0.5)}
    )
    async with gateway(config) as client:
        with pytest.raises(McpError) as up:
            await client.call_tool("sleepy__no_such_tool", {}, retries=0)

        async def idle() -> bool:
            return (await status(client))["sleepy"]["state"] == "idle"

        await until(idle)
        with pytest.raises(McpError) as dormant:
            await client.call_tool("sleepy__no_such_tool", {}, retries=0)
    assert (dormant.value.code, str(dormant.value)) == (up.value.code, str(up.value))
    assert up.value.code == -32602 and "Unknown tool" in str(up.value)


@pytest.mark.slow
async def test_a_tool_the_kept_listing_lacks_is_found_in_the_live_one(tmp_path: Path) -> None:
    """The child gained a tool since its listing was kept (here from the gateway's own
    environment, which does not key the kept listing): a call to it right after start,
    before the slow live listing arrived, waits for that listing instead of failing."""
    config = write_config(tmp_path, {"grows": stdio(BROKEN, "--tools", "echo", "--slow-list", "1")})
    async with gateway(config) as client:
        assert _names(await client.list_tools(cache=False)) == ["grows__echo", "gateway_status"]
    async with gateway(config, env={"BROKEN_EXTRA_TOOLS": "newer"}) as client:
        result = await client.call_tool("grows__newer", {}, retries=0)
        assert not result.is_error and result.text == "newer ran", result


async def test_a_call_that_outwaits_a_first_start_is_retryable(tmp_path: Path) -> None:
    """A lazy child, listed from what was kept, takes longer to start than its call may
    wait: the call fails saying it is still starting, retryably (it was `retryable: false`,
    as for a child that is down for good)."""
    slow = tmp_path / "slow-now"  # present: the child takes 30 s to start
    script = f"if [ -e {slow} ]; then sleep 30; fi; exec {shlex.join(BROKEN)} --tools echo"
    entry = {"command": "sh", "args": ["-c", script], "lazy": True, "startup_timeout_sec": 1}
    config = write_config(tmp_path, {"late": entry})
    async with gateway(config) as client:  # quick this time: its listing is kept
        assert (await client.call_tool("late__echo", {"message": "kept"})).text == "kept"
    slow.touch()
    async with gateway(config) as client:
        assert _names(await client.list_tools(cache=False)) == ["late__echo", "gateway_status"]
        with pytest.raises(McpError) as caught:
            await client.call_tool("late__echo", {"message": "too soon"}, retries=0)
        assert "is starting" in caught.value.message, caught.value.message
        assert caught.value.data["retryable"] is True, caught.value.data
