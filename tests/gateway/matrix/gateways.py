"""One cell's gateway: its config (children, sharing, lifecycle, the policy's entry lists),
its `--policy` file (rules, or a hook: a real aiohttp decision point on 127.0.0.1), the
gateway process (`codex-mcp` over stdio or `codex-mcp-http`) with its stderr kept, a front
client of the cell's revision, and the lifecycle brought about before the report."""

from __future__ import annotations

import json
import os
import re
import signal
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from aiohttp import web
from codex_mcp.client import Client, McpError
from support.polling import until

from ..gateway_helpers import Lines, gateway, launch_http_gateway, stop, write_config
from .cells import V2026, Cell
from .children import CHILDREN, KINDS, HttpChild, JsonObject, config_entry
from .report import Naming, Seen, call_raw, client_options

RELAYED = {"sampling": {}, "elicitation": {}, "roots": {}}
IDLE_SEC = 1
#: What a command line of each child holds (to find its processes under the gateway).
MARKERS = {
    "everything": "mcp-server-everything",
    "sdk": "sdk_matrix.py",
    "ours": "everything_server.py",
    "modern": "stateless_only.py",
}
#: A stderr line of the gateway that says something failed.
ALARM = re.compile(r"(?i)\b(error|exception|traceback|could not|not restarted|failed|refused)\b")


class DecisionPoint:
    """The policy's external decision point (specs/policy.md, "Hook"): allows everything
    but what the matrix hides of each child."""

    def __init__(self) -> None:
        self.runner: web.AppRunner | None = None
        self.url = ""
        self.denied = {
            (key, name)
            for key, child in CHILDREN.items()
            for name in vars(child.hidden).values()
            if name is not None and name != child.hidden.skill_file
        }

    async def start(self) -> None:
        app = web.Application()
        app.router.add_post("/allow", self.decide)
        self.runner = web.AppRunner(app)
        await self.runner.setup()
        await web.TCPSite(self.runner, "127.0.0.1", 0).start()
        self.url = f"http://127.0.0.1:{self.runner.addresses[0][1]}/allow"

    async def decide(self, request: web.Request) -> web.Response:
        asked = (await request.json())["input"]
        own = asked.get(asked.get("kind"))
        return web.json_response(
            {"result": {"allow": (asked.get("child"), own) not in self.denied}}
        )

    async def stop(self) -> None:
        if self.runner is not None:
            await self.runner.cleanup()


def _policy(cell: Cell, hook: str | None) -> JsonObject | None:
    if cell.policy == "none":
        return None
    if cell.policy == "hook":
        assert hook is not None
        return {"default": "allow", "hook": {"url": hook, "timeout_sec": 10}}
    rules = []
    for key in KINDS[cell.child]:
        hidden = CHILDREN[key].hidden
        if hidden.prompt:
            rules.append({"effect": "deny", "child": key, "kind": "prompt", "tool": hidden.prompt})
        uris = [u for u in (hidden.resource, hidden.skill) if u]
        if uris:
            rules.append({"effect": "deny", "child": key, "kind": "resource", "tool": uris})
    return {"default": "allow", "rules": rules}


def config(cell: Cell, directory: Path, http: dict[str, HttpChild]) -> Path:
    servers = {}
    for key in KINDS[cell.child]:
        entry: JsonObject = {**config_entry(key, cell.transport, http)}
        entry["client_capabilities"] = RELAYED
        if cell.sharing == "per_session":
            entry["per_session"] = True
        if cell.lifecycle == "lazy":
            entry["lazy"] = True
        if cell.lifecycle == "idle":
            entry["idle_timeout_sec"] = IDLE_SEC
        if cell.policy == "rules":  # the entry's list is a rule too (specs/policy.md)
            entry["disabled_tools"] = [CHILDREN[key].hidden.tool]
        servers[key] = entry
    return write_config(directory, servers)


@dataclass
class Front:
    """A cell's gateway and its front client, and what the gateway said on stderr."""

    cell: Cell
    client: Client
    pid: int
    stderr: list[str]
    seen: Seen
    http: dict[str, HttpChild]
    lifecycle: list[str] = field(default_factory=list)

    def context(self) -> str:
        """Each alarm line of the raw stderr with the lines after it (a traceback's), for
        the cell's printed diagnosis."""
        shown: list[str] = []
        for n, line in enumerate(self.stderr):
            if ALARM.search(line):
                shown += [line, *self.stderr[n + 1 : n + 40 if "Traceback" in line else n + 1]]
        return "\n".join(line for line in shown if line.strip())

    def alarms(self) -> list[str]:
        """The gateway's stderr lines that say something failed, with what changes from
        run to run (times, numbers, ports, paths) taken out."""
        found = []
        for line in self.stderr:
            if ALARM.search(line):
                line = re.sub(r"^\S+ \S+ ", "", line)  # the timestamp
                line = re.sub(r"/\S+", "<path>", line)
                found.append(re.sub(r"\d+(\.\d+)?", "N", line)[:300])
        return sorted(set(found))


@asynccontextmanager
async def front(
    cell: Cell, directory: Path, http: dict[str, HttpChild], hook: str | None
) -> AsyncIterator[Front]:
    seen = Seen()
    path = config(cell, directory, http)
    args: list[str] = []
    policy = _policy(cell, hook)
    if policy is not None:
        (directory / "policy.json").write_text(json.dumps(policy))
        args = ["--policy", str(directory / "policy.json")]
    era: JsonObject = {"mode": V2026} if cell.front == V2026 else {"protocol_version": cell.front}
    options = {**client_options(seen), **era}
    if cell.lifecycle == "lazy":
        await _keep_listings(path, options)
    if cell.gateway == "stdio":
        errlog = Lines()
        options.pop("timeout")  # gateway() bounds the handshake itself
        client = gateway(path, *args, errlog=errlog, **options)
        async with client:
            process = client.transport.process  # type: ignore[attr-defined]
            yield Front(cell, client, process.pid, errlog.lines, seen, http)
        return
    lines: list[str] = []
    process, url = launch_http_gateway(path, *args, log=lines)
    try:
        async with Client.http(url, **options) as client:
            yield Front(cell, client, process.pid, lines, seen, http)
    finally:
        stop(process)


# -- lifecycles ------------------------------------------------------------------------------
async def _keep_listings(path: Path, options: JsonObject) -> None:
    """A lazy child as it is met in use: the gateway ran before, so its listing is kept on
    disk and served until something needs the child (with none kept, the first listing
    would start it). One gateway of the same config, with the same client, lists once."""
    warm = {k: v for k, v in options.items() if k != "timeout"}
    async with gateway(path, **warm) as client:
        await client.list_tools(cache=False)
        for kind in ("prompts/list", "resources/list"):
            await client.request(kind, {})


def descendants(pid: int) -> list[tuple[int, str]]:
    """(pid, command line) of every live process below `pid` (Linux /proc)."""
    parents: dict[int, list[int]] = {}
    commands: dict[int, str] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            command = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode()
        except (FileNotFoundError, ProcessLookupError, IndexError):
            continue
        if fields[0] != "Z":
            parents.setdefault(int(fields[1]), []).append(int(entry.name))
            commands[int(entry.name)] = command
    found, stack = [], [pid]
    while stack:
        for child in parents.get(stack.pop(), []):
            found.append((child, commands[child]))
            stack.append(child)
    return found


async def _use_each(f: Front) -> None:
    for key in KINDS[f.cell.child]:
        await call_raw(f.client, Naming(key), CHILDREN[key].text)


async def _states(f: Front) -> dict[str, Any]:
    """gateway_status by server name, and the count of live per-session children."""
    result = await f.client.call_tool("gateway_status", {}, retries=0)
    structured = result.structured_content or {}
    states: dict[str, Any] = {s["name"]: s for s in structured.get("servers", [])}
    states["per_session_children"] = structured.get("per_session_children")
    return states


async def bring_about(f: Front) -> None:
    """The cell's lifecycle, before anything else reaches its children: eager and lazy
    need nothing (a lazy child is not started until something needs it); idle: each child
    used once, then waited for until the gateway has stopped it; restarted: each child used
    once, its process killed (an HTTP child's server stopped and started again), and waited
    for until the gateway has it up again. What happened goes to `f.lifecycle`."""
    keys = KINDS[f.cell.child]
    if f.cell.lifecycle == "idle":
        await _use_each(f)

        async def stopped() -> bool:
            states = await _states(f)
            return all(states[k]["state"] in ("idle", "stopped") for k in keys)

        try:
            await until(stopped, timeout=15)
            f.lifecycle.append("stopped")
        except AssertionError:
            f.lifecycle.append(f"not stopped after idle: {await _states(f)}")
    elif f.cell.lifecycle == "restarted":
        await _use_each(f)
        if f.cell.transport == "http":
            for key in keys:
                f.http[key].restart()
            f.lifecycle.append("restarted")
            return
        killed = [p for p, c in descendants(f.pid) if any(m in c for m in _markers(keys))]
        for pid in killed:
            os.kill(pid, signal.SIGKILL)
        if not killed:
            f.lifecycle.append("no child process found to kill")
            return

        async def up_again() -> bool:
            states = await _states(f)
            return all(states[k]["state"] == "ready" and states[k]["restarts"] >= 1 for k in keys)

        try:
            await until(up_again, timeout=30)
            f.lifecycle.append("restarted")
        except (AssertionError, McpError):
            f.lifecycle.append(f"not up again: {await _states(f)}")


def _markers(keys: tuple[str, ...]) -> list[str]:
    return [MARKERS[k] for k in keys]
