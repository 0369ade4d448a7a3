"""Each lint rule, confirmed with the real Codex CLI 0.171 run offline against a fake model.

The fake model records the tools Codex offered it: what Codex kept, how it named them and
what their parameters became. Every test compares that with what `codex-mcp lint` (our model
of Codex, gateway/codex/) predicted for the same definitions, served by the broken server.
"""

from __future__ import annotations

import copy
import json
import sys
from pathlib import Path
from typing import Any

import pytest
from codex_mcp.codex_compat.check import Listing, lint_servers
from codex_mcp.codex_compat.config import RepairConfig
from codex_mcp.codex_compat.policy import REFUSAL
from codex_mcp.codex_compat.repair import repair_tool
from codex_mcp.codex_compat.schema import codex_parameters
from codex_mcp.gateway.routing.naming import NameTable

from .codex_harness import CODEX, ToolCall, run_codex, stdio_server_toml
from .servers import broken_server

pytestmark = [
    pytest.mark.interop,
    pytest.mark.skipif(
        not CODEX.exists(), reason="the Codex CLI is not installed (scripts/setup.sh)"
    ),
]

SERVER = str(Path(__file__).parent / "servers" / "broken_server.py")
READ_ONLY = {"readOnlyHint": True}


def server(name: str, tools: str, custom: list[dict[str, Any]] | None = None, *options: str) -> str:
    args = [SERVER, "--tools", tools or "none", *options]  # no tool is called "none"
    if custom:
        args += ["--custom-tools", json.dumps(custom)]
    return stdio_server_toml(name, sys.executable, args)


def listed(tools: str, custom: list[dict[str, Any]] | None = None) -> list[dict[str, Any]]:
    """The definitions the broken server lists for these arguments."""
    names = [n for n in tools.split(",") if n]
    return [{"name": n, **copy.deepcopy(broken_server.TOOLS[n][0])} for n in names] + copy.deepcopy(
        custom or []
    )


def custom(name: str, schema: Any, **extra: Any) -> dict[str, Any]:
    return {"name": name, "inputSchema": schema, "annotations": READ_ONLY, **extra}


def sized(name: str, size: int) -> dict[str, Any]:
    """A schema exactly `size` bytes as Codex measures it, with descriptions."""
    properties = {f"p{i:02d}": {"type": "string", "description": "d" * 90} for i in range(35)}
    schema = {"type": "object", "properties": properties}
    properties["p00"]["description"] += "d" * (size - codex_parameters(schema).size)
    assert codex_parameters(schema).size == size
    return custom(name, schema)


async def test_names(tmp_path: Path) -> None:
    extra = [
        custom("t" * 118, {"type": "object"}),
        custom("u" * 119, {"type": "object"}),
        custom("echo", {"type": "object"}),
    ]
    tools = "echo,dash-name,dot.name,dot_name," + broken_server.LONG_NAME
    servers = [("brk", tools, extra), ("a-b", "echo", None), ("a_b", "echo", None)]
    run = await run_codex(tmp_path / "home", "".join(server(*s) for s in servers))
    offered = run.model.offered_tools()
    report = lint_servers([Listing(name, listed(t, c)) for name, t, c in servers])
    predicted = {
        (s.server, t.tool): t.codex_name for s in report.servers for t in s.tools if t.codex_name
    }
    actual = {
        f"{ns}__{name}" for ns, tools in offered.items() if ns.startswith("mcp__") for name in tools
    }
    assert set(predicted.values()) == actual, (predicted, actual)
    assert predicted[("brk", "dot.name")] == "mcp__brk__dot_name_542085014c10"
    assert predicted[("brk", "u" * 119)].endswith("_41f8382c1590")
    assert offered["mcp__brk"]["echo"]["parameters"]["required"] == ["message"]  # the first echo
    assert [t.status for t in report.servers[0].tools][-1] == "duplicate"  # the second echo


SCHEMA_CUSTOM = [
    custom(
        "keywords",
        {
            "type": "object",
            "title": "T",
            "properties": {
                "a": {
                    "type": "string",
                    "format": "date",
                    "pattern": "x",
                    "default": "d",
                    "const": "c",
                },
                "b": {"type": "array", "items": {"type": "number", "minimum": 1}, "minItems": 1},
                "c": {"oneOf": [{"type": "string"}, {"type": "number"}]},
                "e": {"anyOf": [{"type": "string"}, {"type": "null"}], "description": "E"},
                "f": {"type": "object", "additionalProperties": {"type": "integer"}},
                "j": {"type": "bogus"},
                "k": True,
            },
            "required": ["a"],
            "additionalProperties": False,
        },
    ),
    custom("root_string", {"type": "string"}),
    custom("no_schema_type", {}),
    custom(
        "description_number",
        {"type": "object", "properties": {"a": {"type": "string", "description": 5}}},
    ),
    custom("required_string", {"type": "object", "properties": {}, "required": "a"}),
    custom(
        "items_tuple",
        {"type": "object", "properties": {"t": {"type": "array", "items": [{"type": "string"}]}}},
    ),
    custom("enum_string", {"type": "object", "properties": {"e": {"enum": "x"}}}),
    custom("additional_string", {"type": "object", "properties": {}, "additionalProperties": "no"}),
    sized("at_limit", 5000),
    sized("over_limit", 5001),
    custom(
        "unicode",
        {"type": "object", "properties": {"a": {"type": "string", "description": "é" * 2480}}},
    ),
    custom(
        "deep",
        {
            "type": "object",
            "properties": {
                "a": {
                    "type": "object",
                    "properties": {
                        "b": {
                            "type": "object",
                            "properties": {
                                "c": {
                                    "type": "object",
                                    "properties": {
                                        f"key_{i:03d}": {"type": "string"} for i in range(250)
                                    },
                                }
                            },
                        }
                    },
                }
            },
        },
    ),
]


async def test_schemas(tmp_path: Path) -> None:
    tools = "missing_types,integer_args,ref_args,recursive_ref,null_root,bad_properties,huge_schema"
    run = await run_codex(tmp_path / "home", server("sch", tools, SCHEMA_CUSTOM))
    offered = run.model.offered_tools()["mcp__sch"]
    definitions = listed(tools, SCHEMA_CUSTOM)
    report = lint_servers([Listing("sch", definitions)])
    kept = {t.tool for t in report.tools if not t.lost}
    assert kept == set(offered)
    assert {t.tool for t in report.tools if t.lost} == {
        "null_root", "bad_properties", "description_number", "required_string",
        "items_tuple", "enum_string", "additional_string",
    }  # fmt: skip
    for definition in definitions:
        if definition["name"] in offered:
            predicted = codex_parameters(definition["inputSchema"]).parameters
            assert offered[definition["name"]]["parameters"] == predicted, definition["name"]
    compacted = {t.tool for t in report.tools if any(f.rule == "compacted" for f in t.findings)}
    assert compacted == {"huge_schema", "over_limit", "unicode", "deep"}
    assert "description" in json.dumps(offered["at_limit"]["parameters"])
    assert "description" not in json.dumps(offered["over_limit"]["parameters"])


async def test_an_unreadable_definition_loses_the_whole_server(tmp_path: Path) -> None:
    bad = {
        "snake": ("echo,snake_case", None),
        "schema_true": ("echo", [{"name": "x", "inputSchema": True}]),
        "hint_string": (
            "echo",
            [custom("x", {"type": "object"}, annotations={"readOnlyHint": "yes"})],
        ),
        "description_number": ("echo", [custom("x", {"type": "object"}, description=5)]),
        "fine": (
            "echo",
            [custom("x", {"type": "object"}, description=None, annotations=None, extra=[1])],
        ),
    }
    run = await run_codex(tmp_path / "home", "".join(server(n, t, c) for n, (t, c) in bad.items()))
    offered = run.model.offered_tools()
    report = lint_servers([Listing(n, listed(t, c)) for n, (t, c) in bad.items()])
    for report_server in report.servers:
        lost = any(f.rule == "server-lost" for f in report_server.findings)
        assert lost == (f"mcp__{report_server.server}" not in offered), report_server.server
    assert set(offered["mcp__fine"]) == {"echo", "x"}


@pytest.mark.parametrize(
    ("tool", "refused"),
    [
        ("no_annotations", True),
        ("not_read_only", True),
        ("not_destructive", True),
        ("closed_world", True),
        ("destructive_closed_world", True),
        ("echo", False),
        ("read_only_destructive", False),
        ("closed_world_not_destructive", False),
    ],
)
async def test_tools_without_read_only_hint_are_refused_by_default(
    tmp_path: Path, tool: str, refused: bool
) -> None:
    extra = [
        {"name": name, "inputSchema": {"type": "object"}, "annotations": annotations}
        for name, annotations in [
            ("not_destructive", {"destructiveHint": False}),
            ("closed_world", {"openWorldHint": False}),
            ("destructive_closed_world", {"destructiveHint": True, "openWorldHint": False}),
            ("read_only_destructive", {"readOnlyHint": True, "destructiveHint": True}),
            ("closed_world_not_destructive", {"destructiveHint": False, "openWorldHint": False}),
        ]
    ]
    toml = server("brk", "echo,no_annotations,not_read_only", extra)
    call = ToolCall("mcp__brk", tool, {"message": "hi"})
    run = await run_codex(tmp_path / "home", toml, call=call, full_access=False)
    (output,) = run.model.tool_outputs()
    assert (REFUSAL in json.dumps(output)) is refused, output
    report = lint_servers([Listing("brk", listed("echo,no_annotations,not_read_only", extra))])
    (linted,) = [t for t in report.tools if t.tool == tool]
    assert any(f.rule == "needs-approval" for f in linted.findings) is refused


async def test_the_model_reads_only_structured_content(tmp_path: Path) -> None:
    run = await run_codex(
        tmp_path / "home", server("brk", "structured"), call=ToolCall("mcp__brk", "structured")
    )
    (output,) = run.model.tool_outputs()
    assert '{"value":42}' in str(output) and "only clients that read text" not in str(output)
    (linted,) = lint_servers([Listing("brk", listed("structured"))]).tools
    assert [f.rule for f in linted.findings] == ["structured-only"]


async def test_codex_keeps_every_tool_the_gateway_repaired_and_named(tmp_path: Path) -> None:
    """The gateway's pipeline (repair, then names) on every broken tool, served as one server
    the way the gateway will serve them: Codex offers each one, under our name, with the
    parameters our model predicts."""
    options = RepairConfig(inline_refs=True, strip_schema_uri=True, shrink_descriptions=True)
    table = NameTable()
    served = []
    for definition in listed(",".join(broken_server.TOOLS)):
        repaired = repair_tool(definition, options)
        named = table.add("broken", definition["name"])
        assert repaired.dropped is None and named is not None
        served.append({**repaired.tool, "name": named.name})
    run = await run_codex(tmp_path / "home", server("codex-mcp", "", served))
    offered = run.model.offered_tools()["mcp__codex_mcp"]
    assert set(offered) == {t["name"] for t in served}
    for tool in served:
        assert (
            offered[tool["name"]]["parameters"] == codex_parameters(tool["inputSchema"]).parameters
        )
    assert lint_servers([Listing("codex-mcp", served)]).lost == 0


async def test_garbage_on_stdout_and_a_stderr_flood_cost_codex_nothing(tmp_path: Path) -> None:
    """What the gateway must match at least: Codex skips non-JSON lines on a child's stdout
    and keeps a child that floods stderr."""
    toml = server("garbage", "echo", None, "--garbage")
    toml += server("flood", "echo", None, "--stderr-flood", "1000000")
    run = await run_codex(tmp_path / "home", toml)
    offered = run.model.offered_tools()
    assert set(offered["mcp__garbage"]) == set(offered["mcp__flood"]) == {"echo"}
