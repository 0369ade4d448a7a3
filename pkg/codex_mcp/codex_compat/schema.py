"""How Codex turns an MCP tool's `inputSchema` into the model's `parameters`
(specs/gateway.md, "What Codex does to MCP tools": Schemas, Compaction)."""

from __future__ import annotations

import copy
import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from .config import CODEX_SCHEMA_MAX_BYTES

_PRIMITIVES = ("string", "number", "boolean", "integer", "object", "array", "null")
_COMPOSITIONS = ("anyOf", "oneOf", "allOf")
_DEFINITIONS = ("$defs", "definitions")
#: Keywords that make a typeless schema a number (Codex's inference and our repair).
NUMERIC_HINTS = ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf")
#: The keys Codex's JsonSchema keeps; everything else is dropped on the way to the model.
MODELLED_KEYS = (
    "$ref", "type", "description", "enum", "items", "minItems", "properties", "required",
    "additionalProperties", "anyOf", "oneOf", "allOf", "$defs", "definitions",
)  # fmt: skip


class SchemaRejected(ValueError):
    """Codex cannot build the tool's parameters from this schema: it skips the tool."""


@dataclass
class CodexSchema:
    #: What the model is offered (None when the tool is skipped).
    parameters: dict[str, Any] | None
    #: Why Codex skips the tool, when it does.
    rejected: str | None = None
    #: Compact JSON size of the normalized schema, the way Codex measures it.
    size: int = 0
    #: The compaction passes that ran (empty when it fits): "descriptions", "definitions",
    #: "deep objects", "compositions".
    compacted: list[str] = field(default_factory=list)
    #: Things the lowering changed or lost, in words ("properties.note: no type, became {}").
    lowered: list[str] = field(default_factory=list)


def codex_parameters(input_schema: Any, max_bytes: int = CODEX_SCHEMA_MAX_BYTES) -> CodexSchema:
    """The model's view of `input_schema`, or why there is none."""
    if not isinstance(input_schema, dict):
        return CodexSchema(None, "inputSchema is not an object")
    schema = copy.deepcopy(input_schema)
    if schema.get("properties") is None:
        schema["properties"] = {}
    lowered: list[str] = []
    _sanitize(schema, "", lowered)
    _prune_definitions(schema)
    try:
        normalized = normalize(schema)
    except SchemaRejected as error:
        return CodexSchema(None, str(error), lowered=lowered)
    size = schema_size(normalized)
    compacted = []
    for label, compaction in _PASSES:
        if schema_size(normalized) <= max_bytes:
            break
        compaction(normalized)
        compacted.append(label)
    return CodexSchema(normalized, None, size, compacted, lowered)


def schema_size(normalized: Any) -> int:
    """UTF-8 bytes of compact JSON (serde_json writes non-ASCII as is)."""
    return len(json.dumps(normalized, ensure_ascii=False, separators=(",", ":")).encode())


# -- lowering (sanitize_json_schema) -------------------------------------------------------


def _sanitize(value: Any, at: str, lowered: list[str]) -> Any:
    """Lower `value` in place where it is a dict or list; returns the replacement for
    booleans (the caller stores it)."""
    if isinstance(value, bool):
        return {"type": "string"}
    if isinstance(value, list):
        for i, item in enumerate(value):
            value[i] = _sanitize(item, f"{at}[{i}]", lowered)
        return value
    if not isinstance(value, dict):
        return value
    properties = value.get("properties")
    if isinstance(properties, dict):
        for name in properties:
            properties[name] = _sanitize(properties[name], _join(at, f"properties.{name}"), lowered)
    for key in ("items", "prefixItems", *_COMPOSITIONS):
        if key in value:
            value[key] = _sanitize(value[key], _join(at, key), lowered)
    extra = value.get("additionalProperties")
    if extra is not None and not isinstance(extra, bool):
        value["additionalProperties"] = _sanitize(extra, _join(at, "additionalProperties"), lowered)
    for table in _DEFINITIONS:
        if table in value and not isinstance(value[table], dict):
            del value[table]
            lowered.append(f"{_join(at, table)}: not an object, dropped")
        elif table in value:
            for name, item in value[table].items():
                value[table][name] = _sanitize(item, _join(at, f"{table}.{name}"), lowered)
    if "const" in value:
        value["enum"] = [value.pop("const")]
    types = _known_types(value.get("type"))
    if not types and ("$ref" in value or any(k in value for k in _COMPOSITIONS)):
        return value
    if not types:
        inferred = _infer_type(value)
        where = at or "the root"
        if inferred is None:
            described = "description" in value
            lost = f" (its description {value['description']!r} is lost)" if described else ""
            lowered.append(f"{where}: no type and nothing to infer one from, became {{}}{lost}")
            value.clear()
            return value
        if "type" in value:
            lowered.append(f"{where}: unknown type {value['type']!r}, became {inferred!r}")
        else:
            lowered.append(f"{where}: no type, Codex calls it {inferred!r}")
        types = [inferred]
    value["type"] = types[0] if len(types) == 1 else types
    if "object" in types and "properties" not in value:
        value["properties"] = {}
    if "array" in types and "items" not in value:
        value["items"] = {"type": "string"}
    return value


def _join(at: str, key: str) -> str:
    return f"{at}.{key}" if at else key


def _known_types(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value] if value in _PRIMITIVES else []
    if isinstance(value, list):
        return [t for t in value if isinstance(t, str) and t in _PRIMITIVES]
    return []


def _infer_type(value: dict[str, Any]) -> str | None:
    if any(k in value for k in ("properties", "required", "additionalProperties")):
        return "object"
    if "items" in value or "prefixItems" in value:
        return "array"
    if "enum" in value or "format" in value:
        return "string"
    if any(k in value for k in NUMERIC_HINTS):
        return "number"
    return None


def _prune_definitions(schema: dict[str, Any]) -> None:
    reachable: set[tuple[str, str]] = set()
    pending = list(_refs(schema, skip_definitions=True))
    while pending:
        pointer = pending.pop()
        if pointer in reachable:
            continue
        reachable.add(pointer)
        table = schema.get(pointer[0])
        if isinstance(table, dict) and pointer[1] in table:
            pending.extend(_refs(table[pointer[1]], skip_definitions=False))
    for table_key in _DEFINITIONS:
        table = schema.get(table_key)
        if isinstance(table, dict):
            for name in [n for n in table if (table_key, n) not in reachable]:
                del table[name]
            if not table:
                del schema[table_key]


def definition_pointer(ref: Any) -> tuple[str, str] | None:
    """`#/$defs/Name/...` -> ("$defs", "Name")."""
    if not isinstance(ref, str) or not ref.startswith("#/"):
        return None
    parts = [p.replace("~1", "/").replace("~0", "~") for p in ref[2:].split("/")]
    if len(parts) >= 2 and parts[0] in _DEFINITIONS:
        return parts[0], parts[1]
    return None


def _refs(value: Any, *, skip_definitions: bool) -> Iterator[tuple[str, str]]:
    if isinstance(value, list):
        for item in value:
            yield from _refs(item, skip_definitions=skip_definitions)
    elif isinstance(value, dict):
        pointer = definition_pointer(value.get("$ref"))
        if pointer:
            yield pointer
        for key, item in value.items():
            if not (skip_definitions and key in _DEFINITIONS):
                yield from _refs(item, skip_definitions=skip_definitions)


# -- deserializing into Codex's JsonSchema ---------------------------------------------------


def normalize(value: Any, at: str = "") -> dict[str, Any]:
    """Only the keys Codex keeps, each checked for the type Codex's JsonSchema expects."""
    where = at or "the root"
    if not isinstance(value, dict):
        raise SchemaRejected(f"{where}: a schema must be an object, not {json.dumps(value)[:40]}")
    out: dict[str, Any] = {}
    for key in MODELLED_KEYS:
        if key not in value or value[key] is None:
            continue
        item, here = value[key], _join(at, key)
        if key in _LEAVES:
            wanted, ok = _LEAVES[key]
            _expect(ok(item), here, wanted, item)
            out[key] = item
        elif key == "items":
            out[key] = normalize(item, here)
        elif key == "additionalProperties":
            out[key] = item if isinstance(item, bool) else normalize(item, here)
        elif key in _COMPOSITIONS:
            _expect(isinstance(item, list), here, "a list of schemas", item)
            out[key] = [normalize(v, f"{here}[{i}]") for i, v in enumerate(item)]
        else:  # properties, $defs, definitions
            _expect(isinstance(item, dict), here, "an object", item)
            out[key] = {name: normalize(v, f"{here}.{name}") for name, v in item.items()}
    if not at and out.get("type") == "null":
        raise SchemaRejected(
            'the root type is "null" (tool input schema must not be a singleton null type)'
        )
    return out


#: The keys that hold values, not schemas: what Codex expects of each.
_LEAVES: dict[str, tuple[str, Callable[[Any], bool]]] = {
    "$ref": ("a string", lambda v: isinstance(v, str)),
    "description": ("a string", lambda v: isinstance(v, str)),
    "type": (
        "a JSON type",
        lambda v: all(t in _PRIMITIVES for t in (v if isinstance(v, list) else [v])),
    ),
    "enum": ("a list", lambda v: isinstance(v, list)),
    "minItems": ("a count", lambda v: isinstance(v, int) and not isinstance(v, bool) and v >= 0),
    "required": (
        "a list of names",
        lambda v: isinstance(v, list) and all(isinstance(r, str) for r in v),
    ),
}


def _expect(ok: bool, where: str, wanted: str, value: Any) -> None:
    if not ok:
        raise SchemaRejected(f"{where} must be {wanted}, not {json.dumps(value)[:40]}")


# -- compaction (compact_large_tool_schema) -------------------------------------------------


def _children(value: dict[str, Any], *, definitions: bool) -> Iterator[tuple[Any, Any]]:
    """(container, key) of every sub-schema directly under `value`."""
    for key in ("items", "additionalProperties"):
        if isinstance(value.get(key), dict):
            yield value, key
    for key in _COMPOSITIONS:
        for i in range(len(value.get(key, ()))):
            yield value[key], i
    tables = ("properties", *_DEFINITIONS) if definitions else ("properties",)
    for table in tables:
        for name in value.get(table, {}):
            yield value[table], name


def _walk(
    value: dict[str, Any],
    visit: Callable[[dict[str, Any], int], bool],
    depth: int = 0,
    *,
    definitions: bool = False,
) -> None:
    """Call visit(schema, depth) top-down; a visit returning False stops the descent there."""
    if not visit(value, depth):
        return
    for container, key in list(_children(value, definitions=definitions)):
        _walk(container[key], visit, depth + 1, definitions=definitions)


def _strip_descriptions(schema: dict[str, Any]) -> None:
    def visit(node: dict[str, Any], _depth: int) -> bool:
        node.pop("description", None)
        return True

    _walk(schema, visit, definitions=True)


def _replace_where(
    schema: dict[str, Any], condition: Callable[[dict[str, Any], int], bool]
) -> None:
    """Every schema (the root included) for which `condition` holds becomes `{}`."""

    def visit(node: dict[str, Any], depth: int) -> bool:
        if condition(node, depth):
            node.clear()
            return False
        return True

    _walk(schema, visit)


def _drop_definitions(schema: dict[str, Any]) -> None:
    _replace_where(schema, lambda node, _d: definition_pointer(node.get("$ref")) is not None)
    for table in _DEFINITIONS:
        schema.pop(table, None)


def _collapse_deep(schema: dict[str, Any]) -> None:
    complex_keys = ("items", *_COMPOSITIONS, "properties", "additionalProperties", "$ref")
    _replace_where(schema, lambda node, depth: depth >= 3 and any(k in node for k in complex_keys))


def _drop_compositions(schema: dict[str, Any]) -> None:
    _replace_where(schema, lambda node, _d: any(k in node for k in _COMPOSITIONS))


_PASSES: list[tuple[str, Callable[[dict[str, Any]], None]]] = [
    ("descriptions", _strip_descriptions),
    ("definitions", _drop_definitions),
    ("deep objects", _collapse_deep),
    ("compositions", _drop_compositions),
]
