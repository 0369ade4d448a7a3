"""Codex served as MCP tools again: `codex` and `codex-reply` on top of `codex app-server`
(specs/codex-tools.md, "What we serve", lists the modules)."""
