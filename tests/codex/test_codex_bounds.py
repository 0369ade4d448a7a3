"""The bounds' rules on their own (codex_mcp.codex.bounds), fast: which servers are
shared, how config keys are flattened and matched, how scopes combine, what an omitted
value becomes. The same rules over real transports and the real Codex:
test_hostile_codex_bounds.py."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
from codex_mcp.codex.bounds import (
    CodexBounds,
    Limits,
    bounds_from_settings,
    config_paths,
    parse_scope_bounds,
    shared_server,
)
from codex_mcp.codex.errors import BoundsError, OutOfBounds
from codex_mcp.codex.protocol import ThreadOptions
from codex_mcp.core.jsonrpc import JsonObject
from codex_mcp.settings import HttpDefaults, StdioDefaults

HTTP = HttpDefaults()


@pytest.mark.parametrize(
    ("settings", "shared"),
    [
        (StdioDefaults(), False),
        (HTTP, False),
        (dataclasses.replace(HTTP, host="::1"), False),
        (dataclasses.replace(HTTP, host="localhost"), False),
        (dataclasses.replace(HTTP, bearer_token="one"), False),
        (dataclasses.replace(HTTP, host="0.0.0.0"), True),
        (dataclasses.replace(HTTP, host="192.168.1.5"), True),
        (dataclasses.replace(HTTP, host="example.com"), True),
        (dataclasses.replace(HTTP, bearer_token_file=Path("tokens")), True),
        (dataclasses.replace(HTTP, oauth_issuer="https://auth.example.com"), True),
    ],
)
def test_which_servers_are_shared(settings: object, shared: bool) -> None:
    assert shared_server(settings) is shared
    assert bounds_from_settings(settings, cwd="/").unbounded is not shared


def test_nested_and_dotted_config_keys_are_the_same_key() -> None:
    nested: JsonObject = {"mcp_servers": {"evil": {"command": "sh", "args": ["-c"]}}}
    dotted: JsonObject = {"mcp_servers.evil.command": "sh", "mcp_servers.evil": {"args": []}}
    expected = [("mcp_servers", "evil", "args"), ("mcp_servers", "evil", "command")]
    assert config_paths(nested) == config_paths(dotted) == expected
    assert config_paths({"empty": {}}) == [("empty",)]


def test_a_config_nested_without_end_is_refused_without_recursion() -> None:
    deep: JsonObject = {"leaf": 1}
    for _ in range(100_000):
        deep = {"t": deep}
    with pytest.raises(OutOfBounds, match="deeper than 16"):
        config_paths(deep)


def bounded(**limits: object) -> CodexBounds:
    return CodexBounds(dataclasses.replace(Limits(config_keys=frozenset()), **limits))


def test_an_allowed_key_allows_the_keys_under_it_by_whole_parts() -> None:
    bounds = bounded(config_keys=frozenset({("model",), ("sandbox_workspace_write",)}))
    fine = ThreadOptions(config={"model": "x", "sandbox_workspace_write": {"network_access": 1}})
    assert bounds.apply(fine).config == fine.config
    with pytest.raises(OutOfBounds, match="'model_provider'"):
        bounds.apply(ThreadOptions(config={"model_provider": "evil"}))


def test_omitted_values_get_the_bound_and_an_unbounded_one_stays_omitted() -> None:
    options = bounded(sandbox="workspace-write", approval="on-request").apply(ThreadOptions())
    assert (options.sandbox, options.approval_policy) == ("workspace-write", "on-request")
    options = bounded().apply(ThreadOptions())
    assert (options.sandbox, options.approval_policy) == (None, None)


def test_scopes_only_raise_and_combine_bound_by_bound(tmp_path: Path) -> None:
    scopes = parse_scope_bounds(
        [
            "a=sandbox:danger-full-access config:model",
            f"b=approval:never cwd-root:{tmp_path} sandbox:read-only",
        ]
    )
    bounds = CodexBounds(
        Limits("workspace-write", "on-request", (Path("/srv"),), frozenset()), scopes
    )
    assert bounds.limits_for(None) == bounds.base
    assert bounds.limits_for({"unknown"}) == bounds.base
    both = bounds.limits_for({"a", "b", "unknown"})
    assert both.sandbox == "danger-full-access"  # b's read-only lowers nothing
    assert both.approval == "never"
    assert both.cwd_roots == (Path("/srv"), tmp_path.resolve())
    assert both.config_keys == frozenset({("model",)})
    assert bounds.limits_for({"b"}).sandbox == "workspace-write"


@pytest.mark.parametrize(
    "entry", ["noequals", "=sandbox:read-only", "s=", "s=sandbox", "s=sandbox:all", "s=ram:1"]
)
def test_a_wrong_scope_entry_is_a_start_up_error(entry: str) -> None:
    with pytest.raises(BoundsError, match="--codex-scope-bounds"):
        parse_scope_bounds([entry])


def test_a_refusal_of_many_keys_stays_short() -> None:
    many: JsonObject = {f"key{n:05}" + "x" * 1000: n for n in range(10_000)}
    with pytest.raises(OutOfBounds) as refused:
        bounded().apply(ThreadOptions(config=many))
    assert "and 9990 more" in refused.value.message
    assert len(refused.value.message) < 2000


def test_a_refused_cwd_is_named_briefly(tmp_path: Path) -> None:
    bounds = bounded(cwd_roots=(tmp_path,))
    for cwd in ("/" + "a" * 1_000_000, "/" + "b/" * 1000):
        with pytest.raises(OutOfBounds) as refused:
            bounds.apply(ThreadOptions(), raw_cwd=cwd)
        assert len(refused.value.message) < 5000
