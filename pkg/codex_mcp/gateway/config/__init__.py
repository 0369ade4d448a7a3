"""The gateway's configuration: everything it is told before it serves, and nothing else.

- `load`: finding the `.mcp.json` (CODEX_MCP_WRAPPER_CONFIG, then upward, then ~/.codex),
  reading it and narrowing it to MCP_WRAPPER_SERVER_NAME. Light: `codex-mcp`
  imports it at every start to look for a file.
- `json_file`: the bounded reader every JSON file another process may write goes through,
  and `ConfigError`, the one located line a bad file is.
- `parse`: a decoded document -> `model`, or one located ConfigError line.
- `model`: the typed configuration the rest of the gateway reads.
- `env`: the WRAPPER_* and DEBUG variables (the gateway-wide timeouts and switches).
- `reload`: reading the file again when it changes or on SIGHUP.
- `early`: the stdio children started right after the file is read, while the gateway
  imports the rest of itself.

It imports nothing of the gateway's runtime (children, routing, relay); they import it.
"""
