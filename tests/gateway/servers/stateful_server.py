"""A stdio server with state in its process: what one client remembers, another served by the
same process would recall. The per-session gateway tests show each session gets its own."""

from __future__ import annotations

import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "pkg"))

from codex_mcp import Server

server = Server("stateful")
memory: list[str] = []


@server.tool(read_only=False)
def remember(value: str) -> str:
    """Keep a value in this process."""
    memory.append(value)
    return f"remembered {value}"


@server.tool(read_only=True)
def recall() -> list[str]:
    """Everything this process was told to remember."""
    return list(memory)


@server.tool(read_only=True)
def pid() -> int:
    """This process's id."""
    return os.getpid()


if __name__ == "__main__":
    server.run()
