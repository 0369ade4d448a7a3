"""The codex tools over stdio, one app-server for the process:
`codex-mcp --serve tests/codex/servers/codex_server.py` (the environment says which Codex
and CODEX_HOME). `--serve codex_mcp.codex.provider` is the same server."""

from codex_mcp.codex.provider import build_server

server = build_server()
