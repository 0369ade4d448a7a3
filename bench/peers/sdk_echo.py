"""The official MCP Python SDK's server with the benchmark tools.

python sdk_echo.py stdio | http PORT | http-json PORT
"""

import os
import sys

from mcp.server.mcpserver import MCPServer

server = MCPServer("sdk-echo")


@server.tool()
def echo(message: str) -> str:
    """Echo the message back."""
    return message


@server.tool()
def blob(size: int) -> str:
    """Return `size` bytes of text."""
    return "x" * size


for index in range(int(os.environ.get("CODEX_MCP_BENCH_TOOLS", "0") or 0)):

    def numbered(message: str) -> str:
        return message

    server.add_tool(numbered, name=f"tool_{index:04d}", description=f"Benchmark tool {index}")

mode = sys.argv[1] if len(sys.argv) > 1 else "stdio"
if mode == "stdio":
    server.run()
else:
    server.run(
        "streamable-http",
        host="127.0.0.1",
        port=int(sys.argv[2]),
        json_response=mode == "http-json",
    )
