"""How much to fuzz: small and fixed in CI, larger on demand.

CODEX_MCP_FUZZ_MESSAGES=100000 CODEX_MCP_FUZZ_SEED=7 .venv/bin/python -m pytest tests/fuzz
"""

from __future__ import annotations

import os
from pathlib import Path

MESSAGES = int(os.environ.get("CODEX_MCP_FUZZ_MESSAGES", "2000"))
SEED = int(os.environ.get("CODEX_MCP_FUZZ_SEED", "20261122"))
#: The profiles of odd kinds (malformed replies, odd batches, id:null) run shorter.
ODD_MESSAGES = min(MESSAGES, 400)
#: A small limit makes oversized messages cheap to send.
MAX_MESSAGE_BYTES = 65536


def rss_growth_limit_kib(messages: int) -> int:
    """How much a server's RSS may grow over a run: 2 MiB for allocator arenas and caches
    warming up, plus 64 bytes a message. Runs grow ~150 KiB whether they send 2,000
    messages or 100,000; a leak of 1 KB a message fails a CI run, 100 bytes a long one."""
    return 2048 + messages * 64 // 1024


def rss_kib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise AssertionError(f"no VmRSS for process {pid}")
