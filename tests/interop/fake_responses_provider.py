"""A fake model provider speaking the OpenAI Responses API (streaming), for the real Codex CLI.

Every request body is recorded, and each one is answered by `provider.responder`, which a
test may swap at any time (even between the turns of one thread):

- `call_echo_tool` (the default): a function call to the MCP tool named `echo` (Codex groups
  an MCP server's tools in a `namespace` tool), then a final message once its output is back.
- `say(text)` / `echo_prompt()`: one plain assistant message; `echo_prompt` repeats the
  user's latest prompt, so a test can see which turn the model was answering.
- `run_command(cmd)`: asks Codex's shell tool (`exec_command`, with
  `sandbox_permissions: "require_escalated"`, so any approval policy but `never` asks the
  user first) to run `cmd`, then reports the command's output in a final message.
- `stall()`: starts a response and sends nothing more until Codex hangs up (an interrupt)
  or the test calls `release()`; `provider.stalled` is set while it waits.
- `refuse(message)`: an HTTP 400 error carrying `message`, which fails the turn.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from typing import Any, Final

from aiohttp import web

ECHO_MESSAGE = "hello from the fake model"
#: Codex 0.171's shell tool, as it lists it in the request's `tools`.
SHELL_TOOL: Final = "exec_command"

Item = dict[str, Any]


class Stall:
    """A responder's answer meaning: start the response and never finish it."""


class Refuse:
    """A responder's answer meaning: refuse the request with an HTTP error."""

    def __init__(self, status: int, message: str) -> None:
        self.status = status
        self.message = message


STALL: Final = Stall()
Responder = Callable[[dict[str, Any], int], list[Item] | Stall | Refuse]


# -- reading a request --------------------------------------------------------
def function_outputs(body: dict[str, Any]) -> dict[str, Any]:
    """call_id -> output, for every tool result in the request's input."""
    return {
        item.get("call_id"): item.get("output")
        for item in body.get("input", [])
        if item.get("type") == "function_call_output"
    }


#: How the context blocks Codex adds as user messages start (environment, AGENTS.md).
INJECTED_PREFIXES: Final = ("<", "# AGENTS.md instructions")


def user_texts(body: dict[str, Any]) -> list[str]:
    """The user's own prompts in the conversation so far (Codex's injected context blocks
    left out)."""
    texts = []
    for item in body.get("input", []):
        if item.get("type") == "message" and item.get("role") == "user":
            for part in item.get("content", []):
                text = part.get("text", "")
                if part.get("type") == "input_text" and not text.lstrip().startswith(
                    INJECTED_PREFIXES
                ):
                    texts.append(text)
    return texts


def assistant_texts(body: dict[str, Any]) -> list[str]:
    return [
        part.get("text", "")
        for item in body.get("input", [])
        if item.get("type") == "message" and item.get("role") == "assistant"
        for part in item.get("content", [])
    ]


# -- answers ------------------------------------------------------------------
def message(text: str, number: int) -> Item:
    return {
        "type": "message",
        "id": f"msg_{number}",
        "role": "assistant",
        "content": [{"type": "output_text", "text": text}],
    }


def function_call(name: str, arguments: dict[str, Any], call_id: str, number: int) -> Item:
    return {
        "type": "function_call",
        "id": f"fc_{number}",
        "call_id": call_id,
        "name": name,
        "arguments": json.dumps(arguments),
    }


def _find_echo(tools: list[dict[str, Any]]) -> dict[str, str]:
    for tool in tools:
        if tool.get("type") == "namespace":
            for inner in tool.get("tools", []):
                if inner.get("name") == "echo":
                    return {"name": "echo", "namespace": tool["name"]}
    return {"name": "echo"}


def call_echo_tool(body: dict[str, Any], number: int) -> list[Item]:
    if function_outputs(body):
        return [message("The tool answered.", number)]
    item = function_call("echo", {"message": ECHO_MESSAGE}, "call_echo", number)
    item.update(_find_echo(body.get("tools", [])))
    return [item]


def call_tool(namespace: str, name: str, arguments: dict[str, Any]) -> Responder:
    """Call one MCP tool (Codex groups a server's tools in `namespace`), then say "Done."."""

    def respond(body: dict[str, Any], number: int) -> list[Item]:
        if function_outputs(body):
            return [message("Done.", number)]
        item = function_call(name, arguments, "call_1", number)
        item["namespace"] = namespace
        return [item]

    return respond


def say(text: str) -> Responder:
    return lambda _body, number: [message(text, number)]


def echo_prompt(prefix: str = "You said: ") -> Responder:
    def respond(body: dict[str, Any], number: int) -> list[Item]:
        prompts = user_texts(body)
        return [message(prefix + (prompts[-1] if prompts else ""), number)]

    return respond


def run_command(cmd: str, justification: str = "The test needs this command") -> Responder:
    call_id = f"call_cmd_{abs(hash(cmd)) % 10**8}"

    def respond(body: dict[str, Any], number: int) -> list[Item]:
        outputs = function_outputs(body)
        if call_id in outputs:
            return [message(f"Command output: {outputs[call_id]}", number)]
        arguments = {
            "cmd": cmd,
            "sandbox_permissions": "require_escalated",
            "justification": justification,
        }
        return [function_call(SHELL_TOOL, arguments, call_id, number)]

    return respond


def stall() -> Responder:
    return lambda _body, _number: STALL


def refuse(message: str, status: int = 400) -> Responder:
    """Answer with an HTTP error (400: one Codex does not retry)."""
    return lambda _body, _number: Refuse(status, message)


def codex_config(port: int, *, top: str = "", tables: str = "", retries: bool = True) -> str:
    """A Codex config.toml that talks to the fake model on `port` and nothing else: `top`
    adds top-level keys (approval_policy...), `tables` adds tables (mcp_servers...);
    `retries=False` makes a failed model request fail the turn at once."""
    no_retries = "" if retries else "request_max_retries = 0\nstream_max_retries = 0\n"
    return f"""
model = "fake-model"
model_provider = "fake"
check_for_update_on_startup = false
{top}
[analytics]
enabled = false

[otel]
exporter = "none"

[model_providers.fake]
name = "fake"
base_url = "http://127.0.0.1:{port}/v1"
wire_api = "responses"
env_key = "FAKE_PROVIDER_KEY"
{no_retries}
{tables}
"""


class FakeProvider:
    def __init__(self, responder: Responder = call_echo_tool) -> None:
        self.responder = responder
        self.requests: list[dict[str, Any]] = []
        #: Set while a `stall()` answer is waiting.
        self.stalled = asyncio.Event()
        #: Set when a stalled response ended because Codex closed the connection.
        self.hung_up = asyncio.Event()
        self._release = asyncio.Event()
        self._arrived = asyncio.Condition()
        self.app = web.Application()
        self.app.router.add_post("/v1/responses", self.responses)
        self.app.router.add_route("*", "/{tail:.*}", self.other)

    async def other(self, request: web.Request) -> web.Response:
        return web.json_response({"data": [], "models": []})

    async def responses(self, request: web.Request) -> web.StreamResponse:
        body = await request.json()
        async with self._arrived:
            self.requests.append(body)
            self._arrived.notify_all()
        number = len(self.requests)
        answer = self.responder(body, number)
        if isinstance(answer, Refuse):
            error = {"message": answer.message, "type": "invalid_request_error", "code": None}
            return web.json_response({"error": error}, status=answer.status)
        response = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        await response.prepare(request)

        async def event(payload: dict[str, Any]) -> None:
            await response.write(
                f"event: {payload['type']}\ndata: {json.dumps(payload)}\n\n".encode()
            )

        await event({"type": "response.created", "response": {"id": f"resp_{number}"}})
        if isinstance(answer, Stall):
            await self._stall(request)
            return response
        for item in answer:
            await event({"type": "response.output_item.done", "item": item})
        usage = {"input_tokens": 1, "output_tokens": 1, "total_tokens": 2}
        await event(
            {"type": "response.completed", "response": {"id": f"resp_{number}", "usage": usage}}
        )
        return response

    async def _stall(self, request: web.Request) -> None:
        self.stalled.set()
        try:
            # aiohttp does not cancel a handler whose client left: watch the socket instead.
            while not self._release.is_set():
                transport = request.transport
                if transport is None or transport.is_closing():
                    self.hung_up.set()
                    return
                try:
                    await asyncio.wait_for(self._release.wait(), 0.05)
                except TimeoutError:
                    pass
        finally:
            self.stalled.clear()

    def release(self) -> None:
        """End every stalled response (call before stopping the server)."""
        self._release.set()

    async def wait_for_requests(self, count: int, timeout: float = 60) -> None:
        async with asyncio.timeout(timeout), self._arrived:
            await self._arrived.wait_for(lambda: len(self.requests) >= count)

    def tool_namespaces(self) -> dict[str, list[str]]:
        """namespace -> tool names, from the first request Codex sent."""
        first = self.requests[0]
        return {
            tool["name"]: [inner["name"] for inner in tool.get("tools", [])]
            for tool in first.get("tools", [])
            if tool.get("type") == "namespace"
        }

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
