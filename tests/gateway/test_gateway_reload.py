"""Hot reload: when its `.mcp.json` changes (or on SIGHUP) the gateway restarts the children
whose entry changed, stops the removed ones, starts the new ones, leaves the others alone,
and tells its clients the lists changed. A real gateway subprocess, real children."""

from __future__ import annotations

import asyncio
import os
import signal
from pathlib import Path
from typing import Any

from codex_mcp.client import Client

from .gateway_helpers import BROKEN, Lines, alive, gateway, status, stdio, until, write_config


def _listening(client: Client) -> asyncio.Event:
    changed = asyncio.Event()

    def on_notification(method: str, _params: object) -> None:
        if method == "notifications/tools/list_changed":
            changed.set()

    client.session.notification_handlers.append(on_notification)
    return changed


def _pids(servers: dict[str, dict[str, Any]]) -> dict[str, int]:
    return {name: server["pid"] for name, server in servers.items() if server["pid"]}


async def test_a_changed_file_restarts_stops_and_starts_what_changed(tmp_path: Path) -> None:
    config = write_config(
        tmp_path,
        {"keep": stdio(BROKEN, "--tools", "echo"),
         "change": stdio(BROKEN, "--tools", "echo"),
         "drop": stdio(BROKEN, "--tools", "echo")},
    )  # fmt: skip
    client = gateway(config)
    changed = _listening(client)
    async with client:
        await client.list_tools(cache=False)
        before = _pids(await status(client))
        write_config(
            tmp_path,
            {"keep": stdio(BROKEN, "--tools", "echo"),
             "change": stdio(BROKEN, "--tools", "echo,structured"),
             "new": stdio(BROKEN, "--tools", "echo")},
        )  # fmt: skip
        await asyncio.wait_for(changed.wait(), 20)

        async def settled() -> dict[str, dict[str, Any]] | None:
            servers = await status(client)
            ready = set(servers) == {"keep", "change", "new"}
            return servers if ready and all(s["pid"] for s in servers.values()) else None

        after = _pids(await until(settled))
        assert after["keep"] == before["keep"]  # untouched
        assert after["change"] != before["change"]
        await until(lambda: not alive(before["drop"]) and not alive(before["change"]))
        tools = [tool.name for tool in await client.list_tools(cache=False)]
        assert tools == [
            "keep__echo", "change__echo", "change__structured", "new__echo", "gateway_status"
        ]  # fmt: skip
        assert (await client.call_tool("new__echo", {"message": "hi"})).text == "hi"


async def test_sighup_reloads_and_a_bad_file_keeps_the_servers(tmp_path: Path) -> None:
    config = write_config(tmp_path, {"one": stdio(BROKEN, "--tools", "echo", "--name", "aaa")})
    errlog = Lines()
    client = gateway(config, errlog=errlog)
    changed = _listening(client)
    async with client:
        pid = (await status(client))["one"]["pid"]
        gateway_pid = client.transport.process.pid  # type: ignore[attr-defined]
        # The same size and time as before, so only SIGHUP can tell it changed.
        stat = config.stat()
        config.write_text(config.read_text().replace('"aaa"', '"bbb"'))
        os.utime(config, ns=(stat.st_atime_ns, stat.st_mtime_ns))
        os.kill(gateway_pid, signal.SIGHUP)
        await asyncio.wait_for(changed.wait(), 20)
        await until(lambda: not alive(pid))
        assert (await client.call_tool("one__echo", {"message": "b"}, retries=0)).text == "b"
        pid = (await status(client))["one"]["pid"]
        # A broken file is reported; the running child stays.
        config.write_text("{ not json")
        await errlog.wait_for(r"config not reloaded, the running servers are kept")
        assert (await status(client))["one"]["pid"] == pid
