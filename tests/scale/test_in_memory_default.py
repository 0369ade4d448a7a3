"""Without --redis-url nothing of Redis is loaded: one process costs what it did."""

from __future__ import annotations

import subprocess
import sys

PROBE = """
import sys
from codex_mcp.builtin import build_server
from codex_mcp.transports.http import HttpConfig, create_app
create_app(build_server().core, HttpConfig())
import codex_mcp.cli.http, codex_mcp.cli.stdio
loaded = sorted(m for m in sys.modules if m == "redis" or m.startswith(("redis.", "codex_mcp.scale")))
print(loaded)
"""


def test_the_in_memory_default_imports_no_redis() -> None:
    done = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"
