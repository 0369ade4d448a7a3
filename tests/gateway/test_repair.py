"""Schema and definition repairs: each one, what it records, and that after them Codex (our
model of it, checked against the CLI in test_codex_interop) keeps every tool."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
from codex_mcp.codex_compat.config import RepairConfig, ToolSettings
from codex_mcp.codex_compat.definition import definition_problems
from codex_mcp.codex_compat.repair import apply_tool_settings, normalize_result, repair_tool
from codex_mcp.codex_compat.schema import codex_parameters

from .servers import broken_server

ALL_ON = RepairConfig(
    integer_to_number=True, inline_refs=True, strip_schema_uri=True, shrink_descriptions=True
)


def broken(name: str) -> dict[str, Any]:
    return {"name": name, **copy.deepcopy(broken_server.TOOLS[name][0])}


def schema_of(name: str, options: RepairConfig | None = None) -> dict[str, Any]:
    return repair_tool(broken(name), options).tool["inputSchema"]


@pytest.mark.parametrize("options", [RepairConfig(), ALL_ON], ids=["defaults", "all"])
@pytest.mark.parametrize("name", list(broken_server.TOOLS))
def test_after_repair_codex_keeps_every_tool(name: str, options: RepairConfig) -> None:
    original = broken(name)
    before = copy.deepcopy(original)
    repaired = repair_tool(original, options)
    assert repaired.dropped is None
    assert definition_problems(repaired.tool) == []
    assert codex_parameters(repaired.tool["inputSchema"]).rejected is None
    assert original == before  # the child's definition is never modified


def test_what_codex_would_have_dropped() -> None:
    for name in ("null_root", "bad_properties"):
        assert codex_parameters(broken(name)["inputSchema"]).rejected is not None
    assert definition_problems(broken("snake_case")) == [
        '"inputSchema" is missing (the tool has a snake-case "input_schema")'
    ]


def test_integer_is_kept_unless_asked() -> None:
    assert schema_of("integer_args")["properties"] == {
        "count": {"type": "integer"},
        "limit": {"type": ["integer", "null"]},
    }
    repaired = repair_tool(broken("integer_args"), RepairConfig(integer_to_number=True))
    assert repaired.tool["inputSchema"]["properties"] == {
        "count": {"type": "number"},
        "limit": {"type": ["number", "null"]},
    }
    assert [str(c) for c in repaired.changes] == [
        "inputSchema.properties.count.type: integer -> number",
        "inputSchema.properties.limit.type: integer -> number",
    ]


def test_missing_types_are_inferred_as_seed_001_says() -> None:
    properties = schema_of("missing_types")["properties"]
    assert properties["mode"]["type"] == "string"  # enum of strings
    assert properties["level"]["type"] == "integer"  # enum: the first value's type
    assert properties["options"]["type"] == "object"  # properties
    assert properties["options"]["properties"]["depth"] == {"type": "integer"}
    assert properties["tags"]["type"] == "array"  # items
    assert properties["note"] == {"description": "free text", "type": "string"}  # else string
    # Codex itself would have made `level` a string enum of numbers and `note` {} (its
    # description lost); after the repair the model sees what the server meant.
    assert codex_parameters(schema_of("missing_types")).lowered == []


@pytest.mark.parametrize(
    ("schema", "inferred"),
    [
        ({"enum": [True, False]}, "boolean"),
        ({"enum": [1.5, 2]}, "number"),
        ({"enum": [None, "x"]}, "null"),
        ({"const": 3}, "integer"),
        ({"items": {"type": "string"}}, "array"),
        ({}, "string"),
    ],
)
def test_inference_cases(schema: dict[str, Any], inferred: str) -> None:
    tool = {"name": "t", "inputSchema": {"type": "object", "properties": {"p": schema}}}
    assert repair_tool(tool).tool["inputSchema"]["properties"]["p"]["type"] == inferred


def test_no_type_is_invented_for_refs_and_combinations() -> None:
    properties = {
        "a": {"$ref": "#/$defs/A"},
        "b": {"anyOf": [{"type": "string"}, {"type": "null"}]},
    }
    tool = {
        "name": "t",
        "inputSchema": {
            "type": "object",
            "properties": properties,
            "$defs": {"A": {"type": "string"}},
        },
    }
    assert repair_tool(tool).tool["inputSchema"]["properties"] == properties


def test_snake_case_definitions_become_camel_case() -> None:
    repaired = repair_tool(broken("snake_case"))
    tool = repaired.tool
    assert "input_schema" not in tool and tool["inputSchema"]["properties"] == {
        "message": {"type": "string"}
    }
    assert tool["outputSchema"] == {"type": "object", "properties": {"snake": {"type": "boolean"}}}
    assert tool["annotations"] == {"readOnlyHint": True}
    assert [str(c) for c in repaired.changes] == [
        "input_schema: renamed inputSchema",
        "output_schema: renamed outputSchema",
        "annotations.read_only_hint: renamed readOnlyHint",
    ]
    assert repair_tool(broken("snake_case"), RepairConfig(camel_case=False)).tool.get(
        "input_schema"
    )


def test_results_get_camel_case_and_nothing_else() -> None:
    result = {
        "content": [{"type": "text", "text": "x"}],
        "is_error": True,
        "structured_content": {"a": 1},
    }
    assert normalize_result(result) == {
        "content": [{"type": "text", "text": "x"}],
        "isError": True,
        "structuredContent": {"a": 1},
    }
    fine = {"content": [], "isError": False}
    assert normalize_result(fine) is fine  # nothing to do: nothing allocated


def test_shapes_that_make_codex_drop_a_tool() -> None:
    assert schema_of("null_root") == {"type": "object", "properties": {}}
    assert schema_of("bad_properties")["properties"] == {
        "a": {"type": "string"},
        "b": {"type": "string"},
    }
    weird = {
        "name": "t",
        "description": 5,
        "annotations": {"readOnlyHint": "true", "openWorldHint": "no", "title": 3},
        "outputSchema": [1],
        "icons": [{"nosrc": 1}],
        "inputSchema": {
            "type": "object",
            "properties": {
                "a": {"type": "string", "description": 7},
                "b": {"type": "array", "items": [{"type": "string"}]},
                "c": {"type": "string", "enum": "x"},
                "d": 5,
            },
            "required": "a",
            "additionalProperties": "no",
        },
    }
    repaired = repair_tool(weird)
    assert definition_problems(weird) and codex_parameters(weird["inputSchema"]).rejected
    assert definition_problems(repaired.tool) == []
    assert codex_parameters(repaired.tool["inputSchema"]).rejected is None
    tool = repaired.tool
    assert tool["description"] == "5" and tool["annotations"] == {"readOnlyHint": True}
    assert "outputSchema" not in tool and "icons" not in tool
    schema = tool["inputSchema"]
    assert schema["required"] == ["a"] and "additionalProperties" not in schema
    assert schema["properties"]["b"]["items"] == {"type": "string"}
    assert schema["properties"]["c"]["enum"] == ["x"] and schema["properties"]["d"] == {
        "type": "string"
    }
    assert len(repaired.changes) >= 10


def test_a_tool_without_a_name_is_dropped_with_a_reason() -> None:
    assert (
        repair_tool({"inputSchema": {}}).dropped
        == "it has no name (a string), so it cannot be called"
    )
    assert repair_tool("nope").dropped is not None


def test_a_missing_input_schema_gets_an_empty_one() -> None:
    repaired = repair_tool({"name": "t"})
    assert repaired.tool["inputSchema"] == {"type": "object", "properties": {}}


def test_refs_are_inlined_when_asked_and_cycles_cut() -> None:
    assert schema_of("ref_args")["properties"]["point"] == {"$ref": "#/$defs/Point"}
    schema = schema_of("ref_args", ALL_ON)
    assert "$defs" not in schema and "$schema" not in schema
    assert schema["properties"]["point"] == {
        "type": "object",
        "properties": {"x": {"type": "number"}, "y": {"type": "number"}},
    }
    tree = schema_of("recursive_ref", ALL_ON)["properties"]["tree"]
    assert tree["properties"]["children"]["items"] == {"type": "object"}  # the cycle, cut
    assert "definitions" not in schema_of("recursive_ref", ALL_ON)


def test_descriptions_are_shrunk_to_fit_codex_instead_of_dropped() -> None:
    original = broken("huge_schema")["inputSchema"]
    assert codex_parameters(original).compacted == ["descriptions"]  # Codex drops them all
    repaired = repair_tool(broken("huge_schema"), RepairConfig(shrink_descriptions=True))
    schema = repaired.tool["inputSchema"]
    seen = codex_parameters(schema)
    assert seen.compacted == [] and seen.size <= 5000
    descriptions = [p["description"] for p in schema["properties"].values()]
    assert all(d.endswith("…") and 10 < len(d) < 150 for d in descriptions)
    (change,) = repaired.changes
    assert change.where == "inputSchema" and "7552 ->" in change.what
    budget = RepairConfig(shrink_descriptions=True, schema_max_bytes=1500)
    small = codex_parameters(repair_tool(broken("huge_schema"), budget).tool["inputSchema"], 1500)
    assert small.size <= 1500 and small.compacted == []


def test_shrinking_leaves_a_small_schema_alone() -> None:
    assert repair_tool(broken("echo"), RepairConfig(shrink_descriptions=True)).changes == []


def test_tool_settings_replace_the_description_and_merge_annotations() -> None:
    tool = repair_tool(broken("not_read_only")).tool
    settings = ToolSettings(
        description="Safe to call.", annotations={"readOnlyHint": True, "title": "T"}
    )
    out = apply_tool_settings(tool, settings)
    assert out.tool["description"] == "Safe to call."
    assert out.tool["annotations"] == {"readOnlyHint": True, "title": "T"}
    assert tool["annotations"] == {"readOnlyHint": False}  # not modified
    assert apply_tool_settings(tool, None).tool is tool
    assert json.dumps(out.tool)  # still JSON


def test_no_type_is_invented_inside_a_combination() -> None:
    """`{"required": ["phone"]}` in an anyOf constrains the parent object; calling it a
    string (seed 001's fallback) would make the schema unsatisfiable. It gets the type of the
    object it constrains (the same schema, said so Codex has nothing left to lower: it
    received the untyped branches before, issue 40); a `not` and a `$ref` are left alone."""
    branches = [{"required": ["phone"]}, {"required": ["email"]}, {"$ref": "#/$defs/x"}]
    schema = {
        "type": "object",
        "properties": {"phone": {"type": "string"}, "email": {"type": "string"}},
        "allOf": [{"anyOf": branches}],
        "not": {"required": ["both"]},
        "$defs": {"x": {"type": "object", "required": ["fax"]}},
    }
    repaired = repair_tool({"name": "t", "inputSchema": schema})
    out = repaired.tool["inputSchema"]
    assert out["allOf"] == [
        {
            "type": "object",
            "anyOf": [
                {"type": "object", "required": ["phone"]},
                {"type": "object", "required": ["email"]},
                {"$ref": "#/$defs/x"},
            ],
        }
    ]
    assert out["not"] == {"required": ["both"]}
    assert codex_parameters(out).lowered == []
    assert codex_parameters(schema).lowered  # what Codex lowered before the repair
    assert {str(c) for c in repaired.changes} == {
        "inputSchema.allOf[0].type: missing, the type it constrains: 'object'",
        "inputSchema.allOf[0].anyOf[0].type: missing, the type it constrains: 'object'",
        "inputSchema.allOf[0].anyOf[1].type: missing, the type it constrains: 'object'",
    }


def test_a_member_under_an_untyped_parent_gets_no_type() -> None:
    schema = {"type": "object", "properties": {"v": {"anyOf": [{"minLength": 1}, {"x": 1}]}}}
    repaired = repair_tool({"name": "t", "inputSchema": schema})
    assert repaired.tool["inputSchema"]["properties"]["v"]["anyOf"] == [{"minLength": 1}, {"x": 1}]
