"""codex-mcp-bench: a neutral MCP load generator (no MCP SDK: asyncio, orjson, aiohttp)."""
