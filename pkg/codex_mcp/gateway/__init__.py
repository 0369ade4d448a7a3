"""The gateway: `codex-mcp` with a `.mcp.json`, one MCP server in front of the child servers
the file names, served through the protocol core like any server of ours (specs/gateway.md;
its parts and the one way they import: "Serving").

Nothing is imported here: `codex-mcp` looks for a `.mcp.json` at every start
(`gateway.config.load.find_config`) and must not pay for the rest when there is none."""
