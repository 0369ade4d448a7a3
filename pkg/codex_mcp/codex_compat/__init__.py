"""The model of what the Codex CLI does to an MCP server and its tools, read in its source
(openai/codex, codex-rs) and checked against the CLI (specs/gateway.md, "What Codex
does to MCP tools"): the names it gives tools (`names`), its view of their input schemas
(`schema`), the definitions it cannot read (`definition`), what it declares to a server
(`client`), its approval and results (`policy`), the judgement of a whole listing
(`check`), and the repairs that make a definition one Codex keeps as it is (`repair`,
`repair_schema`, configured by `config`). `codex-mcp lint`, doctor, the gateway and the
client import it; it imports nothing of theirs.
"""

#: The Codex CLI release this package models; every "Codex X does" in the code is this one.
CODEX_CLI_VERSION = "0.171"
