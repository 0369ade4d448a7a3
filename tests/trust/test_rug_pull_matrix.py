"""The rug pull in every mode, generated: front revision (2025-11-25, 2026-07-28) x shared or
per-session child x stdio or HTTP child x eager, lazy, idle-stopped or restarted x pinning
on-first-use or locked, 64 cells. In each, `add` was trusted as "Adds two numbers." by an
earlier run, and the child now serves it with instructions for the model. Before `codex-mcp
trust`, the changed description reaches no listing, and a call (made before this gateway
listed any tool) is refused naming `codex-mcp trust` and never runs on the child (each child
records the calls it runs); after `codex-mcp trust --accept-all`, it is listed as it is now
and runs (specs/trust.md, "Pinning").

The cells share processes where that changes nothing tested: one gateway per front
revision serves the 32 cells of that revision as 32 servers (each its own child, script and
record of runs), and the HTTP children are two scripted HTTP servers (a path per server),
one of them restarted for the `restarted` cells. About 30 s on a quiet machine."""

from __future__ import annotations

import asyncio
import itertools
import os
import signal
import subprocess
import sys
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from codex_mcp.client import Client
from codex_mcp.gateway.config.load import read_config
from codex_mcp.trust.lock import LockFile, lock_path
from gateway.gateway_helpers import gateway, status, stop, write_config
from support.polling import until
from support.processes import free_port, wait_for_port

from trust.test_rug_pull import ADD, POISON, POISONED, _trust
from trust.trust_helpers import SCRIPTED, runs, write_script

pytestmark = pytest.mark.slow

FRONTS = ("2025-11-25", "2026-07-28")
SHARING = ("shared", "per_session")
TRANSPORTS = ("stdio", "http")
LIFECYCLES = ("eager", "lazy", "idle", "restarted")
PINNING = ("on-first-use", "locked")
IDLE_SEC = 1


@dataclass(frozen=True)
class Cell:
    sharing: str
    transport: str
    lifecycle: str
    pinning: str

    @property
    def name(self) -> str:  # a server name whose tools keep it whole: [a-zA-Z0-9_]
        return "_".join((self.sharing, self.transport, self.lifecycle, self.pinning))

    @property
    def tool(self) -> str:
        return f"{self.name.replace('-', '_')}__add"


CELLS = [Cell(*values) for values in itertools.product(SHARING, TRANSPORTS, LIFECYCLES, PINNING)]


class HttpChildren:
    """The scripted server over HTTP on a port of its own, a script per path (`/NAME`)."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.port = free_port()
        self.process: subprocess.Popen[bytes] | None = None
        self.start()

    def url(self, cell: Cell) -> str:
        return f"http://127.0.0.1:{self.port}/{cell.name}"

    def start(self) -> None:
        self.process = subprocess.Popen(
            [sys.executable, str(SCRIPTED), "--http", str(self.port), str(self.folder)],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )  # fmt: skip
        wait_for_port(self.port, self.process, "the scripted HTTP server")

    def stop(self) -> None:
        if self.process is not None:
            stop(self.process)  # type: ignore[arg-type]
            self.process = None


def _script(folder: Path, cell: Cell) -> Path:
    return folder / f"{cell.name}.json"


def _config(folder: Path, http: dict[str, HttpChildren], pinned: bool) -> Path:
    """The 32 servers; with `pinned`, each with its cell's pinning (else on first use)."""
    servers: dict[str, Any] = {}
    for cell in CELLS:
        script = _script(folder, cell)
        entry: dict[str, Any]
        if cell.transport == "http":
            server = http["restarting" if cell.lifecycle == "restarted" else "steady"]
            entry = {"url": server.url(cell)}
        else:
            environment = {"SCRIPTED_SERVER_FILE": str(script)}
            environment["SCRIPTED_SERVER_RUNS"] = str(script.with_suffix(".runs"))
            entry = {"command": sys.executable, "args": [str(SCRIPTED)], "env": environment}
        if cell.sharing == "per_session":
            entry["per_session"] = True
        if cell.lifecycle == "lazy":
            entry["lazy"] = True
        if cell.lifecycle == "idle":
            entry["idle_timeout_sec"] = IDLE_SEC
        entry["pinning"] = cell.pinning if pinned else "on-first-use"
        servers[cell.name] = entry
    return write_config(folder, servers)


def _front(config: Path, revision: str) -> Client:
    era: dict[str, Any] = (
        {"mode": revision} if revision == "2026-07-28" else {"protocol_version": revision}
    )
    return gateway(config, **era)


@asynccontextmanager
async def _children(folder: Path) -> AsyncIterator[dict[str, HttpChildren]]:
    http = {"steady": HttpChildren(folder), "restarting": HttpChildren(folder)}
    try:
        yield http
    finally:
        for server in http.values():
            server.stop()


def _of(lifecycles: tuple[str, ...]) -> Iterator[Cell]:
    return (cell for cell in CELLS if cell.lifecycle in lifecycles)


async def _refused_everywhere(client: Client, cells: Iterator[Cell], folder: Path) -> None:
    """Each cell's call is refused naming `codex-mcp trust`, and its child ran nothing (every
    cell tried, the ones that fail named together)."""
    failed = []
    for cell in cells:
        refused = await client.call_tool(cell.tool, {"a": 1, "b": 2}, retries=0)
        ran = runs(_script(folder, cell))
        if not (refused.is_error and "codex-mcp trust" in refused.text) or ran:
            failed.append(f"{cell.name}: {refused.text[:120]!r}, {len(ran)} run(s)")
    assert not failed, "\n".join(failed)


async def _ready(client: Client, cells: list[Cell], old: dict[str, Any] | None = None) -> bool:
    servers = await status(client)
    return all(
        servers[c.name]["state"] == "ready"
        and (old is None or servers[c.name]["pid"] not in (None, old[c.name]))
        for c in cells
    )


@pytest.mark.parametrize("revision", FRONTS)
async def test_the_rug_pull_in_every_mode(tmp_path: Path, revision: str) -> None:
    folder = tmp_path
    async with _children(folder) as http:
        # An earlier run trusted `add` of every server (and kept their listings).
        for cell in CELLS:
            write_script(_script(folder, cell), tools=[ADD])
        config = _config(folder, http, pinned=False)
        async with _front(config, revision) as client:
            assert len(await client.list_tools(cache=False)) == len(CELLS) + 1
        trusted = LockFile(lock_path(read_config(config))).read()
        assert len(list(trusted.items(trusted.trusted))) == len(CELLS)

        # This run: eager and lazy children start changed; idle and restarted ones change
        # while they are down.
        for cell in _of(("eager", "lazy")):
            write_script(_script(folder, cell), tools=[POISONED])
        config = _config(folder, http, pinned=True)
        async with _front(config, revision) as client:
            await client.request("resources/list", {})  # per-session children are started
            started = [c for c in CELLS if c.lifecycle != "lazy" or c.sharing == "per_session"]
            await until(lambda: _ready(client, started), timeout=60, what="children up")
            await _refused_everywhere(client, _of(("eager", "lazy")), folder)

            before = await status(client)
            for cell in _of(("idle", "restarted")):
                write_script(_script(folder, cell), tools=[POISONED])
            restarted = [c for c in _of(("restarted",)) if c.transport == "stdio"]
            for cell in restarted:
                os.kill(before[cell.name]["pid"], signal.SIGKILL)
            http["restarting"].stop()
            http["restarting"].start()
            idle = list(_of(("idle",)))

            async def dozing() -> bool:
                servers = await status(client)
                return all(servers[c.name]["state"] == "idle" for c in idle)

            await until(dozing, timeout=30, what="idle children stopped")
            await until(lambda: _ready(client, restarted, before), timeout=30, what="restarted")
            await _refused_everywhere(client, _of(("idle", "restarted")), folder)

            listed = await client.list_tools(cache=False)
            assert [tool.name for tool in listed] == ["gateway_status"], listed
            assert POISON not in str([tool.description for tool in listed])

            assert _trust(config, "--accept-all").returncode == 0

            async def served() -> bool:
                tools = {t.name: t.description for t in await client.list_tools(cache=False)}
                return all(tools.get(cell.tool) == POISON for cell in CELLS)

            await until(served, timeout=30, what="every accepted tool served")
            results = await asyncio.gather(
                *(client.call_tool(cell.tool, {"a": 1, "b": 2}, retries=0) for cell in CELLS)
            )
            assert [result.text for result in results] == ["3"] * len(CELLS)
            assert all(len(runs(_script(folder, cell))) == 1 for cell in CELLS)
