"""What both floors answer: initialize, tools/list and echo/blob calls."""

import os

EXTRA = int(os.environ.get("CODEX_MCP_BENCH_TOOLS", "0") or 0)
SCHEMA = {"type": "object", "properties": {"message": {"type": "string"}}, "required": ["message"]}
TOOLS = [{"name": "echo", "inputSchema": SCHEMA}] + [
    {"name": f"tool_{i:04d}", "description": f"Benchmark tool {i}", "inputSchema": SCHEMA}
    for i in range(EXTRA)
]


def answer(message):
    method, params = message.get("method"), message.get("params") or {}
    if method == "initialize":
        return {
            "protocolVersion": "2025-06-18",
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "floor", "version": "0"},
        }
    if method == "tools/list":
        return {"tools": TOOLS}
    if method == "tools/call":
        args = params.get("arguments") or {}
        text = "x" * args["size"] if params.get("name") == "blob" else args.get("message", "")
        return {"content": [{"type": "text", "text": text}]}
    return {}
