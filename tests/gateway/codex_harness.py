"""Run the real Codex CLI offline against a fake model, to see what Codex does to MCP tools.

The fake model (tests/interop/fake_responses_provider.py) records every request body (the
first one carries the tools Codex offers the model: what it kept, renamed and compacted), and
answers the first request with a call to the tool it is told to call (if any), every later one
with a final message.
"""

from __future__ import annotations

import asyncio
import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from aiohttp import web
from interop.fake_responses_provider import FakeProvider, call_tool, codex_config, say
from support.processes import free_port as _free_port

ROOT = Path(__file__).resolve().parents[2]
CODEX = ROOT / ".tools/npm/node_modules/.bin/codex"


@dataclass
class ToolCall:
    namespace: str
    name: str
    arguments: dict[str, Any] = field(default_factory=dict)


class FakeModel(FakeProvider):
    """The fake model, answering the first request with a call to `call` (if any) and every
    later one with "Done."."""

    def __init__(self, call: ToolCall | None = None) -> None:
        super().__init__(
            say("Done.") if call is None else call_tool(call.namespace, call.name, call.arguments)
        )


@dataclass
class CodexRun:
    model: FakeModel
    returncode: int
    output: str


async def run_codex(
    home: Path,
    servers_toml: str,
    *,
    call: ToolCall | None = None,
    full_access: bool = True,
    env: dict[str, str] | None = None,
    timeout: float = 120,
) -> CodexRun:
    """`codex exec` with `servers_toml` (the `[mcp_servers.*]` tables). With `full_access`
    False, Codex runs with its defaults for exec (no sandbox_mode, no approval_policy)."""
    model = FakeModel(call)
    runner = web.AppRunner(model.app)
    await runner.setup()
    port = _free_port()
    await web.TCPSite(runner, "127.0.0.1", port).start()
    _write_config(home, port, servers_toml, full_access)
    try:
        process = await asyncio.create_subprocess_exec(
            str(CODEX),
            "exec",
            "--strict-config",
            "--skip-git-repo-check",
            "Call the tool",
            cwd=home.parent,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.STDOUT,
            env={
                **os.environ,
                "CODEX_HOME": str(home),
                "FAKE_PROVIDER_KEY": "not-a-real-key",
                **(env or {}),
            },
        )
        try:
            output, _ = await asyncio.wait_for(process.communicate(), timeout)
        except TimeoutError:
            process.kill()
            output, _ = await process.communicate()
        return CodexRun(model, process.returncode or 0, output.decode(errors="replace"))
    finally:
        await runner.cleanup()


def _write_config(home: Path, port: int, servers_toml: str, full_access: bool) -> None:
    home.mkdir(parents=True, exist_ok=True)
    policy = 'approval_policy = "never"\nsandbox_mode = "danger-full-access"\n'
    (home / "config.toml").write_text(
        codex_config(port, top=policy if full_access else "", tables=servers_toml)
    )


def stdio_server_toml(name: str, command: str, args: list[str]) -> str:
    return (
        f"[mcp_servers.{json.dumps(name)}]\ncommand = {json.dumps(command)}\n"
        f"args = {json.dumps(args)}\n"
    )
