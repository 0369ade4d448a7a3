"""Tool name qualification: `mcp__<server>__<tool>`, safe for OpenAI tool names.

OpenAI tool names must match ^[a-zA-Z0-9_-]+$ and be at most 64 characters. Like Codex,
names that are too long keep a prefix and end with the SHA-1 (hex, 40 chars) of the
unsanitized qualified name, so the result is exactly 64 characters, deterministic, and
distinct for distinct inputs even when sanitizing made them look alike.
"""

from __future__ import annotations

import hashlib
import re

DELIMITER = "__"
MAX_TOOL_NAME_LENGTH = 64
_UNSAFE = re.compile(r"[^A-Za-z0-9_-]")


def qualify_tool_name(server_name: str, tool_name: str) -> str:
    """Qualify `tool_name` with `server_name`.

    >>> qualify_tool_name("server1", "tool_a")
    'mcp__server1__tool_a'
    >>> len(qualify_tool_name("srv", "a" * 80))
    64
    """
    qualified = f"mcp{DELIMITER}{server_name}{DELIMITER}{tool_name}"
    safe = _UNSAFE.sub("_", qualified)
    if len(safe) <= MAX_TOOL_NAME_LENGTH:
        return safe
    digest = hashlib.sha1(qualified.encode()).hexdigest()
    return safe[: MAX_TOOL_NAME_LENGTH - len(digest)] + digest
