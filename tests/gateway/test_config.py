"""The gateway's `.mcp.json`: discovery (seed 001's order), every shape, every field, and one
clear error for each way a file can be wrong. Real files in tmp dirs, real env mappings."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import orjson
import pytest
from codex_mcp.gateway.config.load import (
    ConfigError,
    display_path,
    find_config,
    load_config,
    passthrough_config,
    read_config,
    select_server,
)
from codex_mcp.gateway.config.model import HttpTarget, StdioTarget
from codex_mcp.gateway.config.parse import derive_name
from codex_mcp.policy.config import entry_rules
from codex_mcp.policy.rules import Caller, Target, judge


def write(path: Path, document: Any) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(document if isinstance(document, str) else json.dumps(document))
    return path


TIME = {"command": "uvx", "args": ["mcp-server-time"]}


@pytest.fixture
def home(tmp_path: Path) -> Path:
    home = tmp_path / "home"
    home.mkdir()
    return home


@pytest.fixture
def env(home: Path) -> dict[str, str]:
    return {"HOME": str(home)}


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A directory with no .mcp.json anywhere above it (checked, or the test is meaningless)."""
    deep = tmp_path / "project" / "src" / "pkg"
    deep.mkdir(parents=True)
    above = [p / ".mcp.json" for p in (deep, *deep.parents)]
    if any(p.is_file() for p in above):
        pytest.skip(f"a .mcp.json exists above the tmp dir: {[p for p in above if p.is_file()]}")
    return deep


# -- discovery ---------------------------------------------------------------------------


def test_nothing_found_means_no_config(project: Path, env: dict[str, str]) -> None:
    assert find_config(project, env) is None
    assert load_config(project, env) is None


def test_the_home_codex_file_is_the_fallback(
    project: Path, home: Path, env: dict[str, str]
) -> None:
    path = write(home / ".codex/.mcp.json", {"mcpServers": {"time": TIME}})
    assert find_config(project, env) == path
    config = load_config(project, env)
    assert config is not None and [s.name for s in config.servers] == ["time"]


def test_the_nearest_file_upward_wins_over_home(
    project: Path, home: Path, env: dict[str, str]
) -> None:
    write(home / ".codex/.mcp.json", {"mcpServers": {"home": TIME}})
    write(project.parents[1] / ".mcp.json", {"mcpServers": {"far": TIME}})
    assert find_config(project, env) == project.parents[1] / ".mcp.json"
    near = write(project.parent / ".mcp.json", {"mcpServers": {"near": TIME}})
    assert find_config(project, env) == near
    config = load_config(project, env)
    assert config is not None and [s.name for s in config.servers] == ["near"]


def test_the_environment_variable_wins_over_everything(
    project: Path, tmp_path: Path, home: Path, env: dict[str, str]
) -> None:
    write(project / ".mcp.json", {"mcpServers": {"local": TIME}})
    chosen = write(tmp_path / "elsewhere/custom.json", {"servers": {"chosen": TIME}})
    env["CODEX_MCP_WRAPPER_CONFIG"] = str(chosen)
    assert find_config(project, env) == chosen
    env["CODEX_MCP_WRAPPER_CONFIG"] = "../../elsewhere/custom.json"  # relative to the cwd
    assert find_config(tmp_path / "project" / "src", env) == chosen.resolve()


def test_an_environment_variable_naming_no_file_is_an_error(
    project: Path, env: dict[str, str]
) -> None:
    env["CODEX_MCP_WRAPPER_CONFIG"] = str(project / "missing.json")
    with pytest.raises(ConfigError, match=r"CODEX_MCP_WRAPPER_CONFIG points to .*missing\.json"):
        find_config(project, env)


def test_an_empty_environment_variable_is_unset(project: Path, env: dict[str, str]) -> None:
    env["CODEX_MCP_WRAPPER_CONFIG"] = "  "
    assert find_config(project, env) is None


def test_server_name_selects_one(project: Path, env: dict[str, str]) -> None:
    write(project / ".mcp.json", {"mcpServers": {"a": TIME, "b": {**TIME, "enabled": False}}})
    env["MCP_WRAPPER_SERVER_NAME"] = "b"
    config = load_config(project, env)
    assert config is not None
    assert [(s.name, s.enabled) for s in config.servers] == [("b", True)]
    env["MCP_WRAPPER_SERVER_NAME"] = "c"
    with pytest.raises(
        ConfigError, match=r"MCP_WRAPPER_SERVER_NAME='c' names no server \(known: a, b\)"
    ):
        load_config(project, env)


def test_paths_under_home_are_shown_with_a_tilde(home: Path) -> None:
    assert display_path(home / ".codex/.mcp.json", home) == "~/.codex/.mcp.json"
    assert display_path(Path("/etc/mcp.json"), home) == "/etc/mcp.json"


# -- shapes --------------------------------------------------------------------------------


@pytest.mark.parametrize("key", ["servers", "mcp_servers", "mcpServers"])
def test_every_map_shape(tmp_path: Path, env: dict[str, str], key: str) -> None:
    config = read_config(write(tmp_path / ".mcp.json", {key: {"time": TIME, "fs": TIME}}), env)
    assert [s.name for s in config.servers] == ["time", "fs"]
    assert config.servers[0].where.endswith(f"{key}.time")


def test_a_list_with_and_without_names(tmp_path: Path, env: dict[str, str]) -> None:
    document = [
        {"name": "clock", **TIME},
        TIME,
        {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-everything"]},
        {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-everything@1.2.0"]},
    ]
    config = read_config(write(tmp_path / ".mcp.json", document), env)
    assert [s.name for s in config.servers] == [
        "clock",
        "mcp-server-time",
        "server-everything",
        "server-everything_2",
    ]


def test_one_bare_entry(tmp_path: Path, env: dict[str, str]) -> None:
    config = read_config(write(tmp_path / ".mcp.json", {**TIME, "env": {"TZ": "UTC"}}), env)
    (server,) = config.servers
    assert server.name == "mcp-server-time"
    assert server.target == StdioTarget("uvx", ("mcp-server-time",), {"TZ": "UTC"})


def test_an_empty_object_has_no_servers(tmp_path: Path, env: dict[str, str]) -> None:
    assert read_config(write(tmp_path / ".mcp.json", {}), env).servers == ()


@pytest.mark.parametrize(
    ("target", "name"),
    [
        (StdioTarget("uvx", ("mcp-server-time",)), "mcp-server-time"),
        (StdioTarget("npx", ("-y", "@scope/server-files@2.0", "/data")), "server-files"),
        (StdioTarget("/usr/local/bin/serena-mcp"), "serena-mcp"),
        (StdioTarget("python", ("tools/my_server.py",)), "my_server"),
        (StdioTarget("uv", ("run", "weather")), "weather"),
        (HttpTarget("https://mcp.example.com:8443/mcp"), "mcp.example.com"),
    ],
)
def test_names_derived_for_entries_without_one(target: StdioTarget | HttpTarget, name: str) -> None:
    assert derive_name(target) == name


def test_passthrough_is_one_server_with_its_own_names() -> None:
    config = passthrough_config(["uvx", "mcp-server-time", "--local-timezone", "UTC"])
    assert config.passthrough and config.path is None
    (server,) = config.servers
    assert server.name == "mcp-server-time" and server.target.args[-1] == "UTC"  # type: ignore[union-attr]
    with pytest.raises(ConfigError, match="nothing after --"):
        passthrough_config([])


# -- fields --------------------------------------------------------------------------------


def test_stdio_fields_with_variables_expanded(tmp_path: Path, env: dict[str, str]) -> None:
    env |= {"TOOLS_DIR": "/opt/tools", "API_KEY": "k-123"}
    document = {
        "mcpServers": {
            "s": {
                "type": "stdio",
                "command": "${TOOLS_DIR}/server",
                "args": ["--key", "${API_KEY}", "--mode=${MODE:-fast}", "${env:API_KEY}"],
                "env": {"KEY": "${API_KEY}", "PORT": 8080, "MISSING": "${NOT_SET}"},
                "cwd": "sub/dir",
            }
        }
    }
    config = read_config(write(tmp_path / ".mcp.json", document), env)
    target = config.servers[0].target
    assert target == StdioTarget(
        "/opt/tools/server",
        ("--key", "k-123", "--mode=fast", "k-123"),
        {"KEY": "k-123", "PORT": "8080", "MISSING": "${NOT_SET}"},
        str(tmp_path / "sub/dir"),  # relative to the file, not to whoever reads it
    )
    assert any("NOT_SET is not set" in w for w in config.warnings)


def test_http_fields_and_the_bearer_token(tmp_path: Path, env: dict[str, str]) -> None:
    env["ORG"] = "acme"
    document = {
        "mcpServers": {
            "remote": {
                "type": "http",
                "url": "https://mcp.example.com/${ORG}/mcp",
                "headers": {"X-Org": "${ORG}"},
                "bearer_token_env_var": "REMOTE_TOKEN",
                "env_http_headers": {"X-Api-Key": "REMOTE_KEY"},
            },
            "legacy": {"type": "sse", "url": "http://127.0.0.1:9000/sse"},
            "gemini": {"httpUrl": "http://127.0.0.1:9001/mcp"},
        }
    }
    config = read_config(write(tmp_path / ".mcp.json", document), env)
    remote, legacy, gemini = (s.target for s in config.servers)
    assert isinstance(remote, HttpTarget) and remote.url == "https://mcp.example.com/acme/mcp"
    assert remote.resolved_headers({}) == {"X-Org": "acme"}
    assert remote.resolved_headers({"REMOTE_TOKEN": "t0k", "REMOTE_KEY": "k"}) == {
        "X-Org": "acme",
        "X-Api-Key": "k",
        "Authorization": "Bearer t0k",
    }
    assert isinstance(legacy, HttpTarget) and legacy.transport == "sse"
    assert isinstance(gemini, HttpTarget) and gemini.transport == "http"
    assert [s.transport for s in config.servers] == ["http", "sse", "http"]


def test_gateway_options_per_child(tmp_path: Path, env: dict[str, str]) -> None:
    document = {
        "mcpServers": {
            "s": {
                **TIME,
                "per_session": True,
                "startup_timeout_sec": 20,
                "toolsListTimeoutSec": 2.5,
                "tool_timeout_sec": 90,
                "restart": {"policy": "always", "max_restarts": 3, "backoff_max_sec": 5},
                "repair": {
                    "integer_to_number": True,
                    "inline_refs": True,
                    "shrink_descriptions": True,
                },
                "tool_input_schema_max_bytes": 8000,
                "disabled_tools": ["rm"],
                "tools": {
                    "get_time": {"readOnlyHint": True, "rename": "now", "description": "The time."},
                    "set_time": {"annotations": {"destructive_hint": True, "title": "Set"}},
                    "debug": {"hidden": True},
                },
            },
            "off": {**TIME, "disabled": True},
            "quick": {**TIME, "restart": "never", "enabled": True},
        }
    }
    config = read_config(write(tmp_path / ".mcp.json", document), env)
    s, off, quick = config.servers
    assert s.per_session and (
        s.startup_timeout_sec,
        s.tools_list_timeout_sec,
        s.tool_timeout_sec,
    ) == (20, 2.5, 90)
    assert (s.restart.policy, s.restart.max_restarts, s.restart.backoff_max_sec) == ("always", 3, 5)
    assert s.repair.integer_to_number and s.repair.inline_refs and s.repair.shrink_descriptions
    assert (
        s.repair.schema_max_bytes == 8000 and s.repair.fix_shapes and not s.repair.strip_schema_uri
    )
    get_time = s.tools["get_time"]
    assert (get_time.rename, get_time.description, get_time.annotations) == (
        "now",
        "The time.",
        {"readOnlyHint": True},
    )
    assert s.tools["set_time"].annotations == {"destructiveHint": True, "title": "Set"}
    rules = entry_rules([s])  # the allow and deny lists, as the policy applies them
    assert [
        judge(rules, "allow", Caller(), Target("tool", t, s.name, t)).allowed
        for t in ("get_time", "rm", "debug")
    ] == [True, False, False]
    assert not off.enabled and quick.enabled and quick.restart.policy == "never"
    assert config.enabled_servers == (s, quick)


def test_unknown_keys_are_warnings_not_errors(tmp_path: Path, env: dict[str, str]) -> None:
    document = {"mcpServers": {"s": {**TIME, "autoApprove": ["x"], "colour": "red"}}, "extra": 1}
    config = read_config(write(tmp_path / ".mcp.json", document), env)
    assert config.servers[0].name == "s"
    assert any("unknown key 'colour'" in w for w in config.warnings)
    assert any("unknown top-level key 'extra'" in w for w in config.warnings)
    assert not any("autoApprove" in w for w in config.warnings)  # another client's key


# -- bad configs: one clear error each ----------------------------------------------------


@pytest.mark.parametrize(
    ("document", "message"),
    [
        (
            {"servers": {"time": {"command": 5}}},
            'servers.time: "command" must be a string, not a number',
        ),
        ({"servers": {"time": {"command": ""}}}, 'servers.time: "command" must not be empty'),
        (
            {"mcpServers": {"t": {"command": "x", "args": "a b"}}},
            'mcpServers.t: "args" must be a list of strings',
        ),
        (
            {"mcpServers": {"t": {"command": "x", "env": {"A": {}}}}},
            'mcpServers.t: "env.A" must be a string',
        ),
        (
            {"mcpServers": {"t": {"args": ["x"]}}},
            'mcpServers.t: "command" is missing (or give "url" for HTTP)',
        ),
        (
            {"mcpServers": {"t": {"command": "x", "url": "http://h"}}},
            'mcpServers.t: give "command" (stdio) or "url" (HTTP), not both',
        ),
        (
            {"mcpServers": {"t": {"url": "ftp://h"}}},
            "mcpServers.t: \"url\" must start with http:// or https://, not 'ftp://h'",
        ),
        (
            {"mcpServers": {"t": {"type": "ws", "url": "http://h"}}},
            "mcpServers.t: \"type\" must be stdio, http or sse, not 'ws'",
        ),
        ({"mcpServers": {"t": {"type": "http"}}}, 'mcpServers.t: "url" is missing'),
        ({"mcpServers": {"t": "uvx x"}}, "mcpServers.t: a server entry must be an object"),
        (
            {"mcpServers": {"t": {**TIME, "per_session": "yes"}}},
            'mcpServers.t: "per_session" must be true or false, not a string',
        ),
        (
            {"mcpServers": {"t": {**TIME, "tool_timeout_sec": -1}}},
            'mcpServers.t: "tool_timeout_sec" must be at least 0',
        ),
        (
            {"mcpServers": {"t": {**TIME, "restart": "sometimes"}}},
            'mcpServers.t: "restart" must be one of on-failure, always, never',
        ),
        (
            {"mcpServers": {"t": {**TIME, "repair": {"integers": True}}}},
            "mcpServers.t: repair: unknown key 'integers'",
        ),
        (
            {"mcpServers": {"t": {**TIME, "tools": {"x": {"readOnlyHint": "yes"}}}}},
            'mcpServers.t: tools.x: "readOnlyHint" must be true or false',
        ),
        (
            {"mcpServers": {"t": {**TIME, "tools": {"x": {"rename": " "}}}}},
            'mcpServers.t: tools.x: "rename" must not be empty',
        ),
        (
            {"mcpServers": {"a-b": TIME, "a_b": TIME}},
            "mcpServers.a_b: tool names of 'a_b' would collide with mcpServers.a-b (both become a_b__...); rename one",
        ),
        ([{"name": "x", **TIME}, {"name": "x", **TIME}], "[1]: the name 'x' is taken by [0]"),
        ({"mcpServers": {}, "servers": {}}, "mcpServers and servers both list servers; keep one"),
        ({"mcpServers": ["a"]}, "mcpServers[0]: a server entry must be an object"),
        ({"mcpServers": 3}, "mcpServers must be an object of servers"),
        (
            {"hello": "world"},
            'no servers found: expected mcpServers, mcp_servers, servers, a list of entries, or one entry with "command" or "url"',
        ),
        ('"just a string"', "expected an object or a list, not str"),
    ],
)
def test_a_bad_config_gets_one_clear_error(
    home: Path, env: dict[str, str], document: Any, message: str
) -> None:
    path = write(home / ".codex/.mcp.json", document)
    with pytest.raises(ConfigError) as caught:
        read_config(path, env)
    assert str(caught.value) == f"~/.codex/.mcp.json: {message}"


def test_a_config_that_is_not_json_says_where(home: Path, env: dict[str, str]) -> None:
    # The parser's own words and column are the parser's (orjson's; the standard library's
    # differ between 3.11 and 3.13); what is ours is the shape: the file, "not valid JSON",
    # the parser's reason, and the line and column it stopped at.
    document = '{"mcpServers": {\n  "t": {"command": "x",}}}'
    path = write(home / ".codex/.mcp.json", document)
    with pytest.raises(ConfigError) as caught:
        read_config(path, env)
    with pytest.raises(orjson.JSONDecodeError) as parser:
        orjson.loads(document)
    where = parser.value
    assert where.lineno == 2  # the line after the comma, whatever the Python
    assert str(caught.value) == (
        f"~/.codex/.mcp.json: not valid JSON: {where.msg} (line 2, column {where.colno})"
    )


def test_select_server_on_a_parsed_config(tmp_path: Path, env: dict[str, str]) -> None:
    config = read_config(write(tmp_path / ".mcp.json", {"servers": {"a": TIME, "b": TIME}}), env)
    assert [s.name for s in select_server(config, "a").servers] == ["a"]
