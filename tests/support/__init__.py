"""What every test folder shares: waiting on a condition, launching our processes, and a raw
MCP session. Importable as `support` from every folder (pytest puts tests/ on sys.path for
tests/conftest.py, which has no package above it)."""

from support.polling import until, until_sync
from support.processes import HttpProcess, StdioServer, free_port, wait_for_port
from support.raw_session import HEADERS, initialize_request, open_session

__all__ = [
    "HEADERS",
    "HttpProcess",
    "StdioServer",
    "free_port",
    "initialize_request",
    "open_session",
    "until",
    "until_sync",
    "wait_for_port",
]
