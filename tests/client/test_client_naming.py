"""qualify_tool_name: the name Codex gives a server's tool (`mcp__<server>__<tool>`), by
the one model of Codex's naming there is (codex_mcp/lint/codex_model/names.py, checked
against the CLI in tests/gateway/test_codex_interop.py): outside [A-Za-z0-9_] becomes `_`,
and namespace + tool + 2 over 128 characters is cut and ends with `_` + 12 hex of a SHA-1."""

from __future__ import annotations

import pytest
from codex_mcp.client import qualify_tool_name
from codex_mcp.codex_compat.names import codex_names


@pytest.mark.parametrize(
    ("server", "tool", "expected"),
    [
        ("server1", "tool_a", "mcp__server1__tool_a"),
        # `-` too: Codex's Responses namespaces must not carry it
        ("shell", "run-command", "mcp__shell__run_command"),
        ("my.server", "tool name", "mcp__my_server__tool_name"),
        ("mcp-servers/everything", "echo", "mcp__mcp_servers_everything__echo"),
        ("srv", "caf\u00e9", "mcp__srv__caf_"),
        # exactly 128 is kept whole
        ("s", "t" * 120, "mcp__s__" + "t" * 120),
        # one more: cut, and the hash of the raw identity appended
        ("s", "t" * 121, "mcp__s__" + "t" * 107 + "_6553d4acc58b"),
    ],
)
def test_qualify_tool_name(server: str, tool: str, expected: str) -> None:
    assert qualify_tool_name(server, tool) == expected


def test_it_is_codexs_name_for_a_lone_tool() -> None:
    for server, tool in [("a-b", "dot.name"), ("srv", "x" * 200), ("mcp__srv", "t")]:
        (name,) = codex_names([(server, [tool])])
        assert qualify_tool_name(server, tool) == name.qualified


def test_long_names_are_deterministic_unique_and_safe() -> None:
    a = qualify_tool_name("server", "x" * 130 + "1")
    b = qualify_tool_name("server", "x" * 130 + "2")
    assert a != b and len(a) == len(b) == 128
    assert a == qualify_tool_name("server", "x" * 130 + "1")
    # Names that sanitize alike still differ once hashed (the hash is of the raw name).
    c = qualify_tool_name("server", "y" * 130 + ".")
    d = qualify_tool_name("server", "y" * 130 + "/")
    assert c != d
    for name in (a, b, c, d):
        assert all(ch.isascii() and (ch.isalnum() or ch == "_") for ch in name)
