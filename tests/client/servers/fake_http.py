"""A scriptable Streamable HTTP MCP server (aiohttp) for the client tests: it records every
request, can forget sessions (404), fail with HTTP errors, and answer with JSON or SSE."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web


@dataclass
class FakeHttpServer:
    sse: bool = False  # answer requests as event streams instead of JSON bodies
    expire_after_calls: int | None = None  # forget every session once this many calls were served
    always_expire: bool = False  # answer every request after initialize with 404
    fail_statuses: list[int] = field(default_factory=list)  # HTTP errors for the next tools/call
    cut_streams: int = 0  # take this many tools/calls, then cut their SSE stream before the answer
    log: list[dict[str, Any]] = field(default_factory=list)
    sessions: set[str] = field(default_factory=set)
    calls: int = 0
    _next_session: int = 0

    def app(self) -> web.Application:
        app = web.Application()
        app.router.add_route("*", "/mcp", self.handle)
        return app

    def methods(self) -> list[str]:
        return [entry["method"] for entry in self.log]

    async def handle(self, request: web.Request) -> web.StreamResponse:
        session = request.headers.get("Mcp-Session-Id")
        entry: dict[str, Any] = {
            "http": request.method,
            "session": session,
            "version": request.headers.get("MCP-Protocol-Version"),
            "accept": request.headers.get("Accept"),
            "method": request.method,
        }
        self.log.append(entry)
        if request.method == "GET":
            return web.Response(status=405)
        if request.method == "DELETE":
            self.sessions.discard(session or "")
            return web.Response(status=200)
        message = json.loads(await request.read())
        method = message.get("method")
        entry["method"] = method or "<response>"
        if method == "initialize":
            self._next_session += 1
            new = f"session-{self._next_session}"
            self.sessions.add(new)
            result = {
                "protocolVersion": message["params"]["protocolVersion"],
                "capabilities": {"tools": {"listChanged": True}},
                "serverInfo": {"name": "fake-http", "version": "0"},
            }
            return self._answer(message["id"], result, {"Mcp-Session-Id": new})
        if self.always_expire and "id" in message:
            self.sessions.clear()
        if session not in self.sessions:
            return web.json_response(
                {
                    "jsonrpc": "2.0",
                    "id": None,
                    "error": {"code": -32001, "message": "Session not found"},
                },
                status=404,
            )
        if "id" not in message:
            return web.Response(status=202)
        if method == "tools/call":
            if self.fail_statuses:
                return web.Response(status=self.fail_statuses.pop(0), text="try again later")
            self.calls += 1
            if self.cut_streams:
                self.cut_streams -= 1
                return await self._cut(request)
            if self.expire_after_calls is not None and self.calls >= self.expire_after_calls:
                self.sessions.clear()
                self.expire_after_calls = None
            args = message["params"].get("arguments") or {}
            result = {"content": [{"type": "text", "text": f"called {args.get('n', '')}"}]}
            progress = (message["params"].get("_meta") or {}).get("progressToken")
            if self.sse and progress is not None:
                note = {
                    "jsonrpc": "2.0",
                    "method": "notifications/progress",
                    "params": {"progressToken": progress, "progress": 1},
                }
                return await self._stream(request, [note, _response(message["id"], result)])
            return self._answer(message["id"], result)
        if method == "tools/list":
            return self._answer(message["id"], {"tools": [{"name": "t", "inputSchema": {}}]})
        return self._answer(message["id"], {})

    def _answer(
        self, request_id: Any, result: Any, headers: dict[str, str] | None = None
    ) -> web.Response:
        return web.json_response(_response(request_id, result), headers=headers)

    async def _stream(
        self, request: web.Request, messages: list[dict[str, Any]]
    ) -> web.StreamResponse:
        resp = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        await resp.prepare(request)
        await resp.write(b": keep-alive comment\n\n")
        for i, message in enumerate(messages):
            await resp.write(f"id: {i}\nevent: message\ndata: {json.dumps(message)}\n\n".encode())
        await resp.write_eof()
        return resp

    async def _cut(self, request: web.Request) -> web.StreamResponse:
        """The call was taken (and counted); the stream dies before its answer."""
        resp = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        await resp.prepare(request)
        await resp.write(b": working\n\n")
        assert request.transport is not None
        request.transport.abort()
        return resp


def _response(request_id: Any, result: Any) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": request_id, "result": result}
