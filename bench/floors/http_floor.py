"""The HTTP floor: a bare aiohttp JSON-RPC handler answering an MCP echo server's methods."""

import os
import sys
import uuid

import orjson
from aiohttp import web

sys.path.insert(0, os.path.dirname(__file__))
from stdio_floor_answers import answer


async def handle(request: web.Request) -> web.Response:
    message = orjson.loads(await request.read())
    if "id" not in message:
        return web.Response(status=202)
    headers = {"Mcp-Session-Id": uuid.uuid4().hex} if message.get("method") == "initialize" else {}
    body = orjson.dumps({"jsonrpc": "2.0", "id": message["id"], "result": answer(message)})
    return web.Response(body=body, content_type="application/json", headers=headers)


app = web.Application()
app.router.add_post("/mcp", handle)
web.run_app(app, host="127.0.0.1", port=int(sys.argv[1]), print=None, access_log=None)
