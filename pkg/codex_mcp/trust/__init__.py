"""What Codex may trust of the servers behind the gateway (specs/trust.md): each tool's
definition and each skill pinned in a lock the first time it is served, a changed one
withheld until `codex-mcp trust` accepts it, and the skills written into Codex's own skills
folder (`codex-mcp skills sync`). Above the gateway: it imports the gateway, never the
reverse (the CLI installs it on a gateway's core)."""
