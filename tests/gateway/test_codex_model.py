"""Our model of Codex 0.171 (codex_mcp/lint/codex_model/). The expected values are what the real CLI
offered the fake model for the same inputs (test_codex_interop.py re-checks them live)."""

from __future__ import annotations

from typing import Any

import pytest
from codex_mcp.codex_compat.definition import definition_problems
from codex_mcp.codex_compat.policy import (
    model_sees_only_structured_content,
    runs_without_approval,
)
from codex_mcp.codex_compat.schema import codex_parameters, schema_size

from .servers import broken_server


def params(schema: Any, max_bytes: int = 5000) -> Any:
    return codex_parameters(schema, max_bytes).parameters


def test_the_lowering_codex_applies() -> None:
    schema = {
        "type": "object",
        "title": "T",
        "properties": {
            "a": {"type": "string", "format": "date", "pattern": "x", "default": "d", "const": "c"},
            "b": {
                "type": "array",
                "items": {"type": "number", "minimum": 1},
                "minItems": 1,
                "maxItems": 3,
            },
            "c": {"oneOf": [{"type": "string"}, {"type": "number"}]},
            "e": {"anyOf": [{"type": "string"}, {"type": "null"}], "description": "E"},
            "f": {"type": "object", "additionalProperties": {"type": "integer"}},
            "g": {"type": "boolean", "examples": [True]},
            "h": {"enum": [1, 2]},
            "i": {"description": "only a description"},
            "j": {"type": "bogus"},
        },
        "required": ["a"],
        "additionalProperties": False,
    }
    assert params(schema) == {
        "type": "object",
        "properties": {
            "a": {"type": "string", "enum": ["c"]},
            "b": {"type": "array", "items": {"type": "number"}, "minItems": 1},
            "c": {"oneOf": [{"type": "string"}, {"type": "number"}]},
            "e": {"description": "E", "anyOf": [{"type": "string"}, {"type": "null"}]},
            "f": {"type": "object", "properties": {}, "additionalProperties": {"type": "integer"}},
            "g": {"type": "boolean"},
            "h": {"type": "string", "enum": [1, 2]},
            "i": {},
            "j": {},
        },
        "required": ["a"],
        "additionalProperties": False,
    }
    lowered = codex_parameters(schema).lowered
    assert (
        "properties.i: no type and nothing to infer one from, became {} (its description 'only a description' is lost)"
        in lowered
    )
    assert "properties.h: no type, Codex calls it 'string'" in lowered


@pytest.mark.parametrize(
    ("schema", "parameters"),
    [
        ({}, {"type": "object", "properties": {}}),
        ({"type": "string"}, {"type": "string", "properties": {}}),
        (
            {"type": ["object", "null"], "properties": {}},
            {"type": ["object", "null"], "properties": {}},
        ),
        (
            {"properties": {"a": {"type": "string"}}},
            {"type": "object", "properties": {"a": {"type": "string"}}},
        ),
        (
            {"type": "object", "properties": {"x": True}},
            {"type": "object", "properties": {"x": {"type": "string"}}},
        ),
    ],
)
def test_root_cases(schema: Any, parameters: Any) -> None:
    assert params(schema) == parameters


@pytest.mark.parametrize(
    ("schema", "reason"),
    [
        (
            {"type": "null"},
            'the root type is "null" (tool input schema must not be a singleton null type)',
        ),
        (
            {"type": "object", "properties": ["a", "b"]},
            'properties must be an object, not ["a", "b"]',
        ),
        (
            {"type": "object", "properties": {"e": {"enum": "x"}}},
            'properties.e.enum must be a list, not "x"',
        ),
        (
            {"type": "object", "properties": {}, "required": "a"},
            'required must be a list of names, not "a"',
        ),
        (
            {"type": "object", "properties": {"a": {"type": "string", "description": 5}}},
            "properties.a.description must be a string, not 5",
        ),
        (
            {
                "type": "object",
                "properties": {"t": {"type": "array", "items": [{"type": "string"}]}},
            },
            'properties.t.items: a schema must be an object, not [{"type": "string"}]',
        ),
        (
            {"type": "object", "properties": {}, "additionalProperties": "no"},
            'additionalProperties: a schema must be an object, not "no"',
        ),
    ],
)
def test_what_makes_codex_skip_a_tool(schema: Any, reason: str) -> None:
    seen = codex_parameters(schema)
    assert seen.parameters is None and seen.rejected == reason


def test_refs_and_reachable_definitions_are_kept_unused_ones_pruned() -> None:
    schema = {
        "type": "object",
        "properties": {"p": {"$ref": "#/$defs/P"}},
        "$defs": {
            "P": {"type": "object", "properties": {"q": {"$ref": "#/$defs/Q"}}},
            "Q": {"type": "string"},
            "Unused": {"type": "string"},
        },
        "$schema": "http://json-schema.org/draft-07/schema#",
    }
    assert params(schema)["$defs"].keys() == {"P", "Q"}
    assert "$schema" not in params(schema)


def test_size_is_utf8_bytes_of_compact_json() -> None:
    assert schema_size({"a": "é"}) == len('{"a":"é"}'.encode())
    exact = {"type": "object", "properties": {"a": {"type": "string", "description": "d" * 4929}}}
    assert codex_parameters(exact).size == 5000 and codex_parameters(exact).compacted == []
    exact["properties"]["a"]["description"] += "d"
    assert codex_parameters(exact).compacted == ["descriptions"]


def test_compaction_passes_run_in_order_until_it_fits() -> None:
    deep = {
        "type": "object",
        "properties": {
            "l2": {
                "type": "object",
                "properties": {"l3": {"type": "object", "properties": {"x": {"type": "string"}}}},
            }
        },
    }
    schema = {
        "type": "object",
        "description": "d" * 100,
        "properties": {
            "ref": {"$ref": "#/$defs/Big"},
            "deep": deep,
            "either": {"anyOf": [{"type": "string"}, {"type": "number"}]},
        },
        "$defs": {
            "Big": {
                "type": "object",
                "properties": {f"k{i}": {"type": "string"} for i in range(40)},
            }
        },
    }
    size = codex_parameters(schema).size
    assert codex_parameters(schema, size).compacted == []
    assert codex_parameters(schema, size - 1).compacted == ["descriptions"]
    two = codex_parameters(schema, 400)
    assert two.compacted == ["descriptions", "definitions"]
    assert two.parameters["properties"]["ref"] == {} and "$defs" not in two.parameters
    three = codex_parameters(schema, 200)
    assert three.compacted == ["descriptions", "definitions", "deep objects"]
    assert three.parameters["properties"]["deep"]["properties"]["l2"]["properties"]["l3"] == {}
    four = codex_parameters(schema, 10)
    assert four.compacted == ["descriptions", "definitions", "deep objects", "compositions"]
    assert four.parameters["properties"]["either"] == {}


def test_definitions_codex_cannot_read_cost_the_whole_server() -> None:
    good = {"name": "x", "inputSchema": {"type": "object"}}
    assert definition_problems(good) == []
    assert (
        definition_problems({**good, "description": None, "annotations": None, "custom": [1]}) == []
    )
    cases = {
        "name": ({"inputSchema": {}}, '"name" must be a string, not null'),
        "schema": (
            {"name": "x", "inputSchema": True},
            '"inputSchema" must be an object, not a boolean',
        ),
        "snake": (
            {"name": "x", "input_schema": {}},
            '"inputSchema" is missing (the tool has a snake-case "input_schema")',
        ),
        "hint": (
            {**good, "annotations": {"readOnlyHint": "yes"}},
            '"annotations.readOnlyHint" must be true or false, not a string',
        ),
        "title": ({**good, "annotations": {"title": 5}}, '"annotations.title" must be a string'),
        "output": ({**good, "outputSchema": [1]}, '"outputSchema" must be an object, not a list'),
        "meta": ({**good, "_meta": "s"}, '"_meta" must be an object, not a string'),
        "icons": (
            {**good, "icons": [{"nosrc": 1}]},
            '"icons" must be a list of objects with a "src" string',
        ),
    }
    for tool, problem in cases.values():
        assert definition_problems(tool) == [problem]


@pytest.mark.parametrize(
    ("annotations", "runs"),
    [
        (None, False),
        ({}, False),
        ({"readOnlyHint": False}, False),
        ({"destructiveHint": False}, False),
        ({"openWorldHint": False}, False),
        ({"destructiveHint": True, "openWorldHint": False}, False),
        ({"readOnlyHint": True}, True),
        ({"readOnlyHint": True, "destructiveHint": True}, True),
        ({"destructiveHint": False, "openWorldHint": False}, True),
    ],
)
def test_which_tools_run_without_approval(annotations: Any, runs: bool) -> None:
    assert runs_without_approval(annotations) is runs


def test_a_declared_output_schema_means_the_model_reads_structured_content_only() -> None:
    assert model_sees_only_structured_content(
        {"name": "structured", **broken_server.TOOLS["structured"][0]}
    )
    assert not model_sees_only_structured_content(
        {"name": "echo", **broken_server.TOOLS["echo"][0]}
    )
