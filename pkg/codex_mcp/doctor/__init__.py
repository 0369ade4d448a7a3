"""`codex-mcp doctor`: what the Codex CLI (`codex_compat.CODEX_CLI_VERSION`) will show the model from the MCP servers in
its own config.toml, and what it will lose and why.

- codex_config: `$CODEX_HOME/config.toml` and its `[mcp_servers.*]`, read as Codex reads them;
- codex_launch: the environment and PATH Codex starts a stdio server with (shared with
  `codex-mcp --print-codex-config`);
- gateway_entry: the `.mcp.json` behind an entry that is our gateway;
- startup: each server started and listed the way Codex does it, within its timeout;
- report, render, cli: the findings, the table and `--json`, the command line.

specs/doctor.md says what each rule rests on in Codex's source.
"""
