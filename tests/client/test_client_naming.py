"""qualify_tool_name: seed 002's examples, sanitizing, and the 64-character limit."""

from __future__ import annotations

import hashlib

import pytest
from codex_mcp.client import qualify_tool_name

LONG_80 = "a" * 80


@pytest.mark.parametrize(
    ("server", "tool", "expected"),
    [
        # seed 002's doc example, exactly
        ("server1", "tool_a", "mcp__server1__tool_a"),
        ("shell", "run-command", "mcp__shell__run-command"),
        # outside [A-Za-z0-9_-] becomes "_"
        ("my.server", "tool name", "mcp__my_server__tool_name"),
        ("mcp-servers/everything", "echo", "mcp__mcp-servers_everything__echo"),
        ("srv", "caf\u00e9", "mcp__srv__caf_"),
        # exactly 64 is kept whole
        ("s", "t" * 56, "mcp__s__" + "t" * 56),
        # seed 002's long example: 24-character prefix + SHA-1 of the full qualified name
        (
            "srv",
            LONG_80,
            "mcp__srv__aaaaaaaaaaaaaa11027370ba669127468996ee72b8e1d6b8a56d82",
        ),
    ],
)
def test_qualify_tool_name(server: str, tool: str, expected: str) -> None:
    assert qualify_tool_name(server, tool) == expected


def test_seed_long_example_is_64_characters() -> None:
    result = qualify_tool_name("srv", LONG_80)
    assert len(result) == 64
    qualified = "mcp__srv__" + LONG_80
    assert result == qualified[:24] + hashlib.sha1(qualified.encode()).hexdigest()


def test_long_names_are_deterministic_unique_and_safe() -> None:
    a = qualify_tool_name("server", "x" * 70 + "1")
    b = qualify_tool_name("server", "x" * 70 + "2")
    assert a != b and len(a) == len(b) == 64
    assert a == qualify_tool_name("server", "x" * 70 + "1")
    # Names that sanitize alike still differ once hashed (the hash is of the raw name).
    c = qualify_tool_name("server", "y" * 70 + ".")
    d = qualify_tool_name("server", "y" * 70 + "/")
    assert c != d
    for name in (a, b, c, d):
        assert all(ch.isascii() and (ch.isalnum() or ch in "_-") for ch in name)


def test_65_characters_is_truncated() -> None:
    result = qualify_tool_name("s", "t" * 57)
    assert len(result) == 64 and result.startswith("mcp__s__" + "t" * 16)
