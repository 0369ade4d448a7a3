"""An MCP server for Codex's own configuration (not ours to serve): one tool that changes
state, so Codex asks before it runs it (`mcpServer/elicitation/request` to app-server's
client). It appends to the file NOTES_FILE names."""

import os

from codex_mcp import Server

server = Server("notes")


@server.tool()
def write_note(text: str) -> str:
    """Write a note (changes state)."""
    with open(os.environ["NOTES_FILE"], "a") as notes:
        notes.write(text + "\n")
    return f"noted: {text}"
