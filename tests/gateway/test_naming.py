"""The gateway's tool names (`server__tool`), and our model of the names Codex gives tools."""

from __future__ import annotations

import hashlib
import re

import pytest
from codex_mcp.codex_compat.names import codex_names
from codex_mcp.gateway.routing.naming import (
    MAX_NAME_LENGTH,
    NameTable,
    exposed_name,
    sanitize_name,
)

SAFE = re.compile(r"^[A-Za-z0-9_]{1,64}$")
LONG = "a_tool_whose_name_is_far_too_long_for_codex_to_keep_it_whole_when_qualified"


def assign_names(servers: list[tuple[str, list[str]]]) -> NameTable:
    """Names for every (server, [tool, ...]) in the order given, as a catalog assigns them."""
    table = NameTable()
    for server, tools in servers:
        for tool in tools:
            table.add(server, tool)
    return table


@pytest.mark.parametrize(
    ("raw", "safe"),
    [("get-time", "get_time"), ("fs.read", "fs_read"), ("héllo wörld", "h_llo_w_rld"), ("", "_")],
)
def test_sanitize_keeps_only_letters_digits_and_underscores(raw: str, safe: str) -> None:
    assert sanitize_name(raw) == safe


def test_server_and_tool_joined_by_two_underscores() -> None:
    assert exposed_name("serena", "list_dir") == "serena__list_dir"
    assert exposed_name("my-server", "fs.read") == "my_server__fs_read"
    assert exposed_name("", "fs.read") == "fs_read"  # passthrough: no prefix


def test_a_long_name_is_cut_to_64_with_a_stable_hash() -> None:
    name = exposed_name("broken", LONG)
    digest = hashlib.sha1(f"broken\0{LONG}".encode()).hexdigest()[:12]
    assert len(name) == MAX_NAME_LENGTH and SAFE.match(name)
    assert name == f"broken__{LONG}"[: 64 - 13] + "_" + digest
    assert exposed_name("broken", LONG) == name  # deterministic
    assert exposed_name("broken", LONG + "2") != name  # same start, different tool


def test_names_that_collide_after_sanitizing_the_first_keeps_its_name() -> None:
    table = assign_names([("broken", ["dot.name", "dot_name", "echo"])])
    first, second, echo = table.tools
    assert first.name == "broken__dot_name" and first.changes == ("sanitized",)
    assert second.name.startswith("broken__dot_name_") and "collision" in second.changes
    assert (
        second.name == "broken__dot_name" + "_" + hashlib.sha1(b"broken\0dot_name").hexdigest()[:12]
    )
    assert echo.name == "broken__echo" and echo.changes == ()
    assert table.route(second.name) == ("broken", "dot_name")
    assert table.route(first.name) == ("broken", "dot.name")
    assert any("already has its plain name" in w for w in table.warnings)


def test_an_exact_duplicate_first_wins_with_a_warning() -> None:
    table = NameTable()
    assert table.add("s", "echo") is not None
    assert table.add("s", "echo") is None
    assert [t.name for t in table.tools] == ["s__echo"]
    assert table.warnings == ["s: tool 'echo' is listed twice; the first is kept"]


def test_renames_and_a_rename_onto_a_taken_name() -> None:
    table = NameTable()
    assert table.add("time", "get_current_time", rename="now").name == "time__now"  # type: ignore[union-attr]
    assert table.add("time", "now") is not None and table.name_of("time", "now") != "time__now"
    assert table.add("time", "other", rename="now") is None
    assert "which time's 'get_current_time' already has" in table.warnings[-1]
    assert table.route("time__now") == ("time", "get_current_time")


def test_names_are_stable_when_another_backend_is_added() -> None:
    before = assign_names([("a", ["x", "y.z"]), ("b", ["x", LONG])])
    after = assign_names(
        [("a", ["x", "y.z"]), ("new-one", ["x", "y_z", "y.z"]), ("b", ["x", LONG])]
    )
    names_before = {(t.server, t.tool): t.name for t in before.tools}
    names_after = {(t.server, t.tool): t.name for t in after.tools}
    assert all(names_after[key] == name for key, name in names_before.items())


def test_the_order_is_the_order_given() -> None:
    table = assign_names([("b", ["z", "a"]), ("a", ["m"])])
    assert [t.name for t in table.tools] == ["b__z", "b__a", "a__m"]


def test_codex_keeps_every_gateway_name_as_it_is() -> None:
    """What the gateway offers under one server (`codex-mcp`) is what Codex shows the model:
    nothing for Codex to sanitize, hash or cut."""
    tools = ["dash-name", "dot.name", "dot_name", LONG, "x" * 200, "échec"]
    table = assign_names([("broken", tools), ("time-server", ["get.time"])])
    exposed = [t.name for t in table.tools]
    seen = codex_names([("codex-mcp", exposed)])
    assert [n.name for n in seen] == exposed
    assert all(n.changes == ("sanitized",) for n in seen)  # only the namespace: codex-mcp
    assert {n.namespace for n in seen} == {"mcp__codex_mcp"}
    assert all(SAFE.match(name) for name in exposed)


# -- our model of Codex's own naming (each case confirmed with the CLI in test_codex_interop) --


def test_codex_sanitizes_and_hashes_every_colliding_name() -> None:
    by_tool = {
        n.tool: n for n in codex_names([("brk", ["echo", "dash-name", "dot.name", "dot_name"])])
    }
    assert by_tool["dash-name"].name == "dash_name"
    assert by_tool["dot.name"].name == "dot_name_542085014c10"
    assert by_tool["dot_name"].name == "dot_name_4d83208852ce"
    assert by_tool["echo"].qualified == "mcp__brk__echo"


def test_codex_cuts_at_128_for_namespace_plus_tool() -> None:
    kept, cut = codex_names([("brk", ["t" * 118, "u" * 119])])
    assert kept.name == "t" * 118 and kept.changes == ()
    assert cut.name == "u" * 105 + "_41f8382c1590" and cut.changes == ("too long",)


def test_codex_hashes_colliding_namespaces_and_skips_duplicates() -> None:
    names = codex_names([("a-b", ["echo"]), ("a_b", ["echo", "echo"])])
    assert [n.namespace for n in names] == ["mcp__a_b_e0598e406614", "mcp__a_b_909e3df97957", None]
    assert names[-1].changes == ("duplicate",)
