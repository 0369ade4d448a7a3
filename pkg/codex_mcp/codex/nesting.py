"""How deep this bridge runs inside Codexes that bridges of ours started, and the refusal
past one level (specs/codex-tools.md, "Nesting").

Each bridge gives the Codex it starts `CODEX_MCP_BRIDGE_DEPTH`: its own depth plus one. A
command that Codex runs inherits it; an MCP server Codex starts does not (Codex gives those a
cleared environment), so a bridge also reads it from its ancestors' environments (Linux
/proc; the nearest one that has it)."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Final

from .errors import CodexError

DEPTH_ENV: Final = "CODEX_MCP_BRIDGE_DEPTH"
#: A bridge inside a bridge's Codex is served (a Codex handing work to another); one inside
#: that one's Codex is refused: each level is a Codex, and the model decides how many.
MAX_DEPTH: Final = 1
_MARKER = DEPTH_ENV.encode() + b"="
_ANCESTORS = 64


class NestedTooDeep(CodexError):
    """This bridge runs too deep inside Codexes that bridges started."""


def depth(environ: Mapping[str, str] | None = None) -> int:
    """How many bridges' Codexes this process runs inside."""
    own = (os.environ if environ is None else environ).get(DEPTH_ENV, "")
    return max(_number(own.encode()), _ancestors())


def _number(value: bytes) -> int:
    """A depth as written; anything else (outside text: any bytes) counts as none."""
    value = value.strip()
    return int(value) if value.isdigit() and len(value) <= 4 else 0


def _ancestors() -> int:
    pid = os.getppid()
    for _ in range(_ANCESTORS):
        if pid <= 1:
            break
        try:
            environ = Path(f"/proc/{pid}/environ").read_bytes()
            stat = Path(f"/proc/{pid}/stat").read_bytes()
        except OSError:  # not Linux, gone, or not ours to read
            break
        for entry in environ.split(b"\0"):
            if entry.startswith(_MARKER):
                return _number(entry[len(_MARKER) :])
        try:
            pid = int(stat[stat.rindex(b")") + 2 :].split()[1])
        except (ValueError, IndexError):
            break
    return 0


def refusal(found: int) -> NestedTooDeep | None:
    """The error every call gets at `found` deep, or None when this bridge may serve."""
    if found <= MAX_DEPTH:
        return None
    return NestedTooDeep(
        f"refused: this codex-mcp --serve codex runs inside a Codex that a codex-mcp bridge "
        f"started, {found} deep ({DEPTH_ENV}={found}; at most {MAX_DEPTH}): the Codex it "
        "started reads the same config.toml, whose entry serving `codex-mcp --serve codex` "
        "would start a Codex per level as deep as the model asks. Give that entry a "
        "CODEX_HOME of its own (`env`) whose config.toml does not serve it again"
    )
