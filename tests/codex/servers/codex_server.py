"""The codex tools over stdio, one app-server for the process's one session:
`codex-mcp --serve tests/codex/servers/codex_server.py` (the environment says which Codex
and CODEX_HOME). `--serve codex` is the same server, with the settings' cap and log file."""

from codex_mcp.codex.provider import build_server

server = build_server()
