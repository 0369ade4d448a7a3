"""Run the real Codex CLI offline against a fake model, to see what Codex does to MCP tools.

The fake model speaks the OpenAI Responses API (streaming). It records every request body (the
first one carries the tools Codex offers the model: what it kept, renamed and compacted), and
answers the first request with a call to the tool it is told to call (if any), every later one
with a final message. Same approach as tests/interop/fake_responses_provider.py, with the tool
to call chosen by the test.
"""

from __future__ import annotations

import asyncio
import json
import os
import socket
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from aiohttp import web
from interop.fake_responses_provider import codex_config

ROOT = Path(__file__).resolve().parents[2]
CODEX = ROOT / ".tools/npm/node_modules/.bin/codex"


@dataclass
class ToolCall:
    namespace: str
    name: str
    arguments: dict[str, Any] = field(default_factory=dict)


class FakeModel:
    def __init__(self, call: ToolCall | None = None) -> None:
        self.call = call
        self.requests: list[dict[str, Any]] = []
        self.app = web.Application()
        self.app.router.add_post("/v1/responses", self._responses)
        self.app.router.add_route("*", "/{tail:.*}", self._other)

    async def _other(self, _request: web.Request) -> web.Response:
        return web.json_response({"data": [], "models": []})

    async def _responses(self, request: web.Request) -> web.StreamResponse:
        body = await request.json()
        self.requests.append(body)
        response = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        await response.prepare(request)
        number = len(self.requests)

        async def event(payload: dict[str, Any]) -> None:
            await response.write(
                f"event: {payload['type']}\ndata: {json.dumps(payload)}\n\n".encode()
            )

        await event({"type": "response.created", "response": {"id": f"resp_{number}"}})
        answered = any(i.get("type") == "function_call_output" for i in body.get("input", []))
        if self.call is not None and not answered:
            item: dict[str, Any] = {
                "type": "function_call",
                "id": f"fc_{number}",
                "call_id": "call_1",
                "name": self.call.name,
                "namespace": self.call.namespace,
                "arguments": json.dumps(self.call.arguments),
            }
        else:
            item = {
                "type": "message",
                "id": f"msg_{number}",
                "role": "assistant",
                "content": [{"type": "output_text", "text": "Done."}],
            }
        await event({"type": "response.output_item.done", "item": item})
        usage = {"input_tokens": 1, "output_tokens": 1, "total_tokens": 2}
        await event(
            {"type": "response.completed", "response": {"id": f"resp_{number}", "usage": usage}}
        )
        return response

    def offered_tools(self) -> dict[str, dict[str, dict[str, Any]]]:
        """namespace -> tool name -> the function tool Codex offered, from the first request."""
        first = self.requests[0]
        return {
            tool["name"]: {inner["name"]: inner for inner in tool.get("tools", [])}
            for tool in first.get("tools", [])
            if tool.get("type") == "namespace"
        }

    def tool_outputs(self) -> list[Any]:
        return [
            item["output"]
            for body in self.requests
            for item in body.get("input", [])
            if item.get("type") == "function_call_output"
        ]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


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
