"""What the real Codex CLI 0.169 does to an MCP server's tools, modelled from its source
(openai/codex, codex-rs) and checked against the CLI itself (tests/gateway/test_codex_interop.py).

`codex-mcp lint` reports with these; the gateway's repairs aim at them. Each module names the
Codex file and function its rule comes from. This is a description of behaviour, written from
reading that source, not a port of it.
"""
