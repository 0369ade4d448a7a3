"""Tools that misbehave: one prints to stdout, one raises."""

import sys

from codex_mcp import Server

server = Server("misbehaving")


@server.tool(read_only=True)
def chatty(message: str) -> str:
    print("this must not reach the protocol stream")
    sys.stdout.write("nor this\n")
    return message


@server.tool(read_only=True)
def explode() -> str:
    raise RuntimeError("kaboom")
