"""A fake model provider speaking the OpenAI Responses API (streaming), for the real Codex CLI.

The first model request is answered with a function call to the MCP tool named `echo`
(Codex groups an MCP server's tools in a `namespace` tool); the request carrying the
tool's output is answered with a final message. Every request body is recorded.
"""

from __future__ import annotations

import json
from typing import Any

from aiohttp import web

ECHO_MESSAGE = "hello from the fake model"


def _find_echo(tools: list[dict[str, Any]]) -> dict[str, str]:
    for tool in tools:
        if tool.get("type") == "namespace":
            for inner in tool.get("tools", []):
                if inner.get("name") == "echo":
                    return {"name": "echo", "namespace": tool["name"]}
    return {"name": "echo"}


class FakeProvider:
    def __init__(self) -> None:
        self.requests: list[dict[str, Any]] = []
        self.app = web.Application()
        self.app.router.add_post("/v1/responses", self.responses)
        self.app.router.add_route("*", "/{tail:.*}", self.other)

    async def other(self, request: web.Request) -> web.Response:
        return web.json_response({"data": [], "models": []})

    async def responses(self, request: web.Request) -> web.StreamResponse:
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
        outputs = [i for i in body.get("input", []) if i.get("type") == "function_call_output"]
        if not outputs:
            item: dict[str, Any] = {
                "type": "function_call",
                "id": f"fc_{number}",
                "call_id": "call_echo",
                "arguments": json.dumps({"message": ECHO_MESSAGE}),
                **_find_echo(body.get("tools", [])),
            }
        else:
            item = {
                "type": "message",
                "id": f"msg_{number}",
                "role": "assistant",
                "content": [{"type": "output_text", "text": "The tool answered."}],
            }
        await event({"type": "response.output_item.done", "item": item})
        usage = {"input_tokens": 1, "output_tokens": 1, "total_tokens": 2}
        await event(
            {"type": "response.completed", "response": {"id": f"resp_{number}", "usage": usage}}
        )
        return response

    def tool_namespaces(self) -> dict[str, list[str]]:
        """namespace -> tool names, from the first request Codex sent."""
        first = self.requests[0]
        return {
            tool["name"]: [inner["name"] for inner in tool.get("tools", [])]
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
