"""Shared pieces of the gateway's serving tests: the real children, configs, and the gateway
as a real subprocess (stdio) or HTTP server, always with an explicit config so nothing on the
machine is discovered by accident."""

from __future__ import annotations

import asyncio
import json
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

from codex_mcp.client import Client
from support.polling import until as until
from support.processes import HttpProcess

ROOT = Path(__file__).resolve().parents[2]
PY = sys.executable
CMD_MCP = str(ROOT / "cmd/mcp")
CMD_HTTP = str(ROOT / "cmd/http")
SERVERS = Path(__file__).parent / "servers"
BROKEN = [PY, str(SERVERS / "broken_server.py")]
STATEFUL = [PY, str(SERVERS / "stateful_server.py")]
EXAMPLES = [PY, CMD_MCP, "--serve", str(ROOT / "examples/everything_server.py")]
CANCELLABLE = [PY, CMD_MCP, "--serve", str(ROOT / "tests/interop/servers/cancellable.py")]
TIME = Path(PY).parent / "mcp-server-time"
EVERYTHING = ROOT / ".tools/npm/node_modules/.bin/mcp-server-everything"
FILESYSTEM = ROOT / ".tools/servers/node_modules/.bin/mcp-server-filesystem"
MISSING_NPM = "run .ci/node-tools.sh to install the npm reference servers"


def stdio(command: list[str] | Path, *args: str, **extra: Any) -> dict[str, Any]:
    """A stdio entry of a .mcp.json."""
    argv = [str(command)] if isinstance(command, Path) else list(command)
    return {"command": argv[0], "args": [*argv[1:], *args], **extra}


def write_config(directory: Path, servers: dict[str, Any], **top: Any) -> Path:
    path = directory / ".mcp.json"
    path.write_text(json.dumps({"mcpServers": servers, **top}, indent=2))
    return path


def gateway_env(config: Path | None, **extra: str) -> dict[str, str]:
    """Our environment, pointed at `config`, with the gateway's variables cleared."""
    env = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith(("WRAPPER_", "MCP_WRAPPER_", "CODEX_MCP_")) and key not in ("DEBUG",)
    }
    if config is not None:
        env["CODEX_MCP_WRAPPER_CONFIG"] = str(config)
    return {**env, **extra}


class Lines:
    """A text sink for a process's stderr: keeps the lines, and wakes whoever waits for one."""

    def __init__(self) -> None:
        self.lines: list[str] = []
        self._waiters: list[tuple[re.Pattern[str], asyncio.Future[str]]] = []
        self._loop: asyncio.AbstractEventLoop | None = None

    def write(self, text: str) -> int:
        for line in text.splitlines():
            self.lines.append(line)
            for pattern, future in list(self._waiters):
                if pattern.search(line) and not future.done():
                    future.get_loop().call_soon_threadsafe(_resolve, future, line)
        return len(text)

    def flush(self) -> None:
        pass

    async def wait_for(self, pattern: str, timeout: float = 20.0) -> str:
        compiled = re.compile(pattern)
        for line in self.lines:
            if compiled.search(line):
                return line
        future: asyncio.Future[str] = asyncio.get_running_loop().create_future()
        self._waiters.append((compiled, future))
        try:
            return await asyncio.wait_for(future, timeout)
        finally:
            self._waiters.remove((compiled, future))

    def text(self) -> str:
        return "\n".join(self.lines)


def _resolve(future: asyncio.Future[str], line: str) -> None:
    if not future.done():
        future.set_result(line)


def gateway(
    config: Path | None,
    *args: str,
    errlog: Lines | None = None,
    env: dict[str, str] | None = None,
    **options: Any,
) -> Client:
    """Our client (with `options`, as Client takes them) on a `codex-mcp` gateway subprocess."""
    return Client.stdio(
        [PY, CMD_MCP, *args],
        env=gateway_env(config, **(env or {})),
        errlog=errlog,  # type: ignore[arg-type]
        timeout=30,
        **options,
    )


async def status(client: Client) -> dict[str, dict[str, Any]]:
    """The gateway_status tool's answer, by server name."""
    result = await client.call_tool("gateway_status", {}, retries=0)
    assert result.structured_content is not None
    return {s["name"]: s for s in result.structured_content["servers"]}


def alive(pid: int) -> bool:
    """Is `pid` a live process (not a zombie)?"""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, IndexError, ProcessLookupError):
        return False
    return state != "Z"


def group_members(pgid: int) -> list[int]:
    """Live processes in process group `pgid` (Linux /proc)."""
    members = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except (FileNotFoundError, ProcessLookupError, IndexError):
            continue
        if int(fields[2]) == pgid and fields[0] != "Z":
            members.append(int(entry.name))
    return members


def launch_http(
    *args: str,
    env: dict[str, str] | None = None,
    command: list[str] | None = None,
    log: list[str] | None = None,
) -> tuple[subprocess.Popen[str], str]:
    """`codex-mcp-http --port 0 ARGS` (or `command`, an HTTP server that says where it
    listens); returns the process and its /mcp URL. `log`, when given, gets its stderr's
    lines as they come."""
    server = HttpProcess(*args, command=command, lines=log, env=env)
    return server.process, server.url


def launch_http_gateway(
    config: Path, *args: str, log: list[str] | None = None, **env: str
) -> tuple[subprocess.Popen[str], str]:
    """`codex-mcp-http` serving the gateway of `config` (its stderr's lines into `log`)."""
    return launch_http(*args, env=gateway_env(config, **env), log=log)


def stop(process: subprocess.Popen[str]) -> None:
    process.terminate()
    try:
        process.wait(15)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


def iter_lines(stream: IO[str]) -> Iterator[str]:
    yield from iter(stream.readline, "")
