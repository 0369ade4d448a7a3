"""`python cmd/http`: the HTTP MCP server (same as the `codex-mcp-http` console script)."""

import sys
from pathlib import Path

try:
    from codex_mcp.cli.http import main
except ImportError:  # running from a checkout without `pip install`
    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "pkg"))
    from codex_mcp.cli.http import main

main()
