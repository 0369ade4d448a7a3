"""The gateway: `codex-mcp` with a `.mcp.json`, one MCP server in front of the child servers
the file names, served through the protocol core (`codex_mcp.core`) like any server of ours.

Its parts import one way: `children/` supervises each child process (its states, its
connection, its kept listing); `routing/` and `relay/` build on it, the first to name and
route what the children offer (catalog, tool names, per-session children), the second to
send a front request to its child and put the child's questions to the client; the modules
at the top (`provider.py`, `status.py`, `serve.py`, `logins.py`) put them together. Below
them all: its configuration (`config/`) and its errors (`errors.py`). The model of what
Codex does to tools, and the repairs made from it, are `codex_mcp.lint`'s, which the
gateway imports.

Nothing is imported here: `codex-mcp` looks for a `.mcp.json` at every start
(`gateway.config.load.find_config`) and must not pay for the rest when there is none.
See specs/gateway.md for the config format and what the gateway does to each message.
"""
