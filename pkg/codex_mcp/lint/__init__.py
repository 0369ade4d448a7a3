"""`codex-mcp lint`: what Codex does to a server's tools (its names, its view of the input
schemas, its approval policy: `codex_model/`), the repairs that make a definition one
Codex keeps as it is (`repair.py`, `repair_schema.py`), the report per server and tool
(`check.py`), the fix plan (`fix.py`) and the command (`cli.py`). A tool for any MCP
server; the gateway applies its repairs to its children's tools, and this package imports
none of the gateway's runtime (only its configuration's model and its errors)."""
