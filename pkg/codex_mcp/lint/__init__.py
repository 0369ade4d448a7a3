"""`codex-mcp lint`: start or reach MCP servers, list their tools, and show what Codex does to
them (`cli.py`), with the gateway entries that repair it (`fix.py`). The model of Codex it
applies is `codex_mcp.codex_compat`."""
