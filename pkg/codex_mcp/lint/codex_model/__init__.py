"""What the Codex CLI 0.171 does to an MCP server's tools, read in its source (openai/codex,
codex-rs) and checked against the CLI (specs/gateway.md, "What Codex 0.171 does to MCP tools")."""
