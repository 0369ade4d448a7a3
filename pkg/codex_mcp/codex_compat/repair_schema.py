"""Repairs of one input schema, each recorded where it was made (`properties.count.type`).
The input is never modified: a repaired copy is returned."""

from __future__ import annotations

import copy
import json
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from .config import RepairConfig
from .schema import NUMERIC_HINTS, codex_parameters

_COMPOSITIONS = ("anyOf", "oneOf", "allOf")
_DEFINITIONS = ("$defs", "definitions")
_ELLIPSIS = "…"
_OBJECT_HINTS = (
    "properties",
    "required",
    "additionalProperties",
    "patternProperties",
    "minProperties",
    "maxProperties",
)
_ARRAY_HINTS = ("items", "prefixItems", "minItems", "maxItems", "uniqueItems", "contains")


@dataclass(frozen=True, slots=True)
class Change:
    where: str
    what: str

    def __str__(self) -> str:
        return f"{self.where}: {self.what}"


def stringify(node: dict[str, Any], key: str) -> str | None:
    """A `key` that is not a string made one (a number, a boolean) or dropped (anything else):
    what was done, or None when nothing had to be."""
    value = node.get(key)
    if value is None or isinstance(value, str):
        return None
    if isinstance(value, int | float | bool):
        node[key] = str(value)
        return "not a string, made one"
    del node[key]
    return "not a string, dropped"


def _at(base: str, key: str) -> str:
    return f"{base}.{key}" if base else key


def _json_type(value: Any, integer: str) -> str:
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return integer
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    if value is None:
        return "null"
    return "array" if isinstance(value, list) else "object"


class _Repairer:
    def __init__(self, options: RepairConfig, base: str) -> None:
        self.options = options
        self.base = base
        self.changes: list[Change] = []

    def note(self, where: str, what: str) -> None:
        self.changes.append(
            Change(_at(self.base, where) if where else self.base or "inputSchema", what)
        )

    # -- the root ----------------------------------------------------------------------
    def root(self, schema: Any) -> Any:
        if not isinstance(schema, dict):
            if self.options.fix_shapes:
                self.note(
                    "",
                    f"not an object ({json.dumps(schema)[:30]}), replaced by an empty object schema",
                )
                return {"type": "object", "properties": {}}
            return schema
        schema = copy.deepcopy(schema)
        if self.options.fix_shapes and schema.get("type") != "object":
            if "type" in schema:
                self.note(
                    "type",
                    f'{json.dumps(schema["type"])} at the root, set to "object" (MCP tool arguments are an object)',
                )
            else:
                self.note("type", 'missing at the root, set to "object"')
            schema["type"] = "object"
            schema.setdefault("properties", {})
        if self.options.inline_refs:
            schema = _RefInliner(schema, self).inline()
        self.walk(schema, "")
        if self.options.strip_schema_uri:
            self.strip_key(schema, "", "$schema")
        if self.options.shrink_descriptions:
            self.shrink(schema)
        return schema

    # -- every schema object --------------------------------------------------------------
    def walk(
        self, node: dict[str, Any], at: str, under: str | None = None, inherited: Any = None
    ) -> None:
        """`under`: the keyword `node` is a member of (anyOf/oneOf/allOf, or `not`), where a
        schema without a type is a constraint on its parent's value (`{"required": ["a"]}`):
        inventing a type there would contradict the parent's, but the parent's own type
        (`inherited`) says the same as the parent, and spares Codex lowering the member."""
        if (
            under in _COMPOSITIONS
            and inherited is not None
            and self.options.infer_types
            and "type" not in node
            and "$ref" not in node
        ):
            node["type"] = inherited
            self.note(_at(at, "type"), f"missing, the type it constrains: {inherited!r}")
        if self.options.fix_shapes:
            self.fix_shapes(node, at)
        own = node.get("type") if _typed(node.get("type")) else None
        for child, where, keyword in _subschemas(node, at):
            self.walk(child, where, keyword, own)
        if self.options.infer_types and at and under is None:
            self.infer_type(node, at)
        if self.options.integer_to_number:
            self.integer_to_number(node, at)

    def fix_shapes(self, node: dict[str, Any], at: str) -> None:
        """What would make Codex drop the tool: values of the wrong JSON type."""
        properties = node.get("properties")
        if "properties" in node and not isinstance(properties, dict):
            if isinstance(properties, list) and all(isinstance(p, str) for p in properties):
                node["properties"] = {name: {} for name in properties}
                self.note(_at(at, "properties"), "a list of names, made an object of empty schemas")
            else:
                node["properties"] = {}
                self.note(
                    _at(at, "properties"),
                    f"{json.dumps(properties)[:30]} is not an object, replaced by {{}}",
                )
        for table in ("properties", *_DEFINITIONS):
            if table in node and not isinstance(node[table], dict):
                self.note(_at(at, table), "not an object, dropped")
                del node[table]
                continue
            for name, child in list(node.get(table, {}).items()):
                if not isinstance(child, dict | bool):
                    node[table][name] = {}
                    self.note(
                        _at(at, f"{table}.{name}"),
                        f"{json.dumps(child)[:30]} is not a schema, replaced by {{}}",
                    )
        items = node.get("items")
        if isinstance(items, list):
            kept = [i for i in items if isinstance(i, dict)]
            node["items"] = kept[0] if len(kept) == 1 else {"anyOf": kept} if kept else {}
            self.note(_at(at, "items"), "a list (tuple form), replaced by one schema")
        elif "items" in node and not isinstance(items, dict | bool):
            node["items"] = {}
            self.note(_at(at, "items"), "not a schema, replaced by {}")
        self.fix_scalars(node, at)

    def fix_scalars(self, node: dict[str, Any], at: str) -> None:
        done = stringify(node, "description")
        if done is not None:
            self.note(_at(at, "description"), done)
        required = node.get("required")
        if "required" in node and not (
            isinstance(required, list) and all(isinstance(r, str) for r in required)
        ):
            fixed = (
                [required]
                if isinstance(required, str)
                else [r for r in required or [] if isinstance(r, str)]
                if isinstance(required, list)
                else None
            )
            if fixed:
                node["required"] = fixed
                self.note(_at(at, "required"), "not a list of names, corrected")
            else:
                del node["required"]
                self.note(_at(at, "required"), "not a list of names, dropped")
        if "enum" in node and not isinstance(node["enum"], list):
            node["enum"] = [node["enum"]]
            self.note(_at(at, "enum"), "not a list, made a one-value list")
        extra = node.get("additionalProperties")
        if extra is not None and not isinstance(extra, bool | dict):
            del node["additionalProperties"]
            self.note(_at(at, "additionalProperties"), "neither a boolean nor a schema, dropped")
        for key in _COMPOSITIONS:
            if key in node and not isinstance(node[key], list):
                del node[key]
                self.note(_at(at, key), "not a list, dropped")
            elif key in node and not all(isinstance(v, dict | bool) for v in node[key]):
                node[key] = [v for v in node[key] if isinstance(v, dict | bool)]
                self.note(_at(at, key), "entries that are not schemas dropped")
        min_items = node.get("minItems")
        if min_items is not None and not (
            isinstance(min_items, int) and not isinstance(min_items, bool) and min_items >= 0
        ):
            del node["minItems"]
            self.note(_at(at, "minItems"), "not a count, dropped")

    def infer_type(self, node: dict[str, Any], at: str) -> None:
        """The TypeScript wrapper's rule, with every keyword Codex counts (specs/gateway.md,
        "Repairs": infer_types)."""
        if "type" in node or "$ref" in node or any(k in node for k in (*_COMPOSITIONS, "not")):
            return
        integer = "number" if self.options.integer_to_number else "integer"
        if "const" in node:
            inferred = _json_type(node["const"], integer)
        elif isinstance(node.get("enum"), list) and node["enum"]:
            inferred = _json_type(node["enum"][0], integer)
        elif any(k in node for k in _OBJECT_HINTS):
            inferred = "object"
        elif any(k in node for k in _ARRAY_HINTS):
            inferred = "array"
        elif any(k in node for k in NUMERIC_HINTS):
            inferred = "number"
        else:
            inferred = "string"
        node["type"] = inferred
        self.note(_at(at, "type"), f"missing, inferred {inferred!r}")

    def integer_to_number(self, node: dict[str, Any], at: str) -> None:
        kind = node.get("type")
        if kind == "integer":
            node["type"] = "number"
        elif isinstance(kind, list) and "integer" in kind:
            node["type"] = list(dict.fromkeys("number" if t == "integer" else t for t in kind))
        else:
            return
        self.note(_at(at, "type"), "integer -> number")

    def strip_key(self, node: Any, at: str, key: str) -> None:
        if isinstance(node, dict):
            if key in node:
                del node[key]
                self.note(_at(at, key), "dropped")
            for name, child in node.items():
                self.strip_key(child, _at(at, name), key)
        elif isinstance(node, list):
            for i, child in enumerate(node):
                self.strip_key(child, f"{at}[{i}]", key)

    # -- descriptions, to fit Codex's budget ----------------------------------------------
    def shrink(self, schema: dict[str, Any]) -> None:
        budget = self.options.schema_max_bytes
        before = codex_parameters(schema, budget).size
        if before <= budget:
            return
        longest = max((len(text) for _node, text in _descriptions(schema)), default=0)
        low, high = 0, longest  # the largest cap that fits
        while low < high:
            cap = (low + high + 1) // 2
            trial = copy.deepcopy(schema)
            _cap_descriptions(trial, cap)
            if codex_parameters(trial, budget).size <= budget:
                low = cap
            else:
                high = cap - 1
        _cap_descriptions(schema, low)
        after = codex_parameters(schema, budget).size
        what = f"descriptions cut to {low} characters" if low else "descriptions dropped"
        self.note("", f"{what}: {before} -> {after} bytes as Codex counts (budget {budget})")
        if after > budget:
            self.note(
                "", f"still {after} bytes without descriptions: Codex will compact it further"
            )


def _typed(kind: Any) -> bool:
    """A `type` to pass on: a name, or a list of names."""
    return isinstance(kind, str) or (
        isinstance(kind, list) and bool(kind) and all(isinstance(k, str) for k in kind)
    )


def _subschemas(node: dict[str, Any], at: str) -> Iterator[tuple[dict[str, Any], str, str | None]]:
    """(schema, where, keyword) of each schema directly under `node`; `keyword`: the one it
    constrains its parent's value in (anyOf/oneOf/allOf, `not`), else None."""
    for key in ("items", "additionalProperties", "not"):
        child = node.get(key)
        if isinstance(child, dict):
            yield child, _at(at, key), key if key == "not" else None
    for key in ("properties", *_DEFINITIONS, "patternProperties"):
        table = node.get(key)
        for name, child in table.items() if isinstance(table, dict) else ():
            if isinstance(child, dict):
                yield child, _at(at, f"{key}.{name}"), None
    for key in (*_COMPOSITIONS, "prefixItems"):
        variants = node.get(key)
        for i, child in enumerate(variants if isinstance(variants, list) else ()):
            if isinstance(child, dict):
                yield child, f"{_at(at, key)}[{i}]", None if key == "prefixItems" else key


def _descriptions(node: dict[str, Any]) -> Iterator[tuple[dict[str, Any], str]]:
    """(schema, text) of every string description in the schema `node` and below."""
    if isinstance(node.get("description"), str):
        yield node, node["description"]
    for child, _where, _member in _subschemas(node, ""):
        yield from _descriptions(child)


def _cap_descriptions(schema: dict[str, Any], cap: int) -> None:
    """Every description longer than `cap` characters cut to it (dropped when `cap` is 0)."""
    for node, text in list(_descriptions(schema)):
        if len(text) > cap:
            if cap == 0:
                del node["description"]
            else:
                node["description"] = text[: cap - 1].rstrip() + _ELLIPSIS


class _RefInliner:
    """Replace local `$ref`s by a copy of their target; a reference back into a schema being
    inlined (a cycle) becomes `{}` (any value)."""

    def __init__(self, root: dict[str, Any], repairer: _Repairer) -> None:
        self.root = root
        self.repairer = repairer

    def inline(self) -> dict[str, Any]:
        out: dict[str, Any] = self._resolve(self.root, "", ())
        remaining = json.dumps({k: v for k, v in out.items() if k not in _DEFINITIONS})
        for table in _DEFINITIONS:
            if table in out and f'"#/{table}/' not in remaining:
                del out[table]
                self.repairer.note(table, "dropped after inlining")
        return out

    def _resolve(self, node: Any, at: str, active: tuple[str, ...]) -> Any:
        if isinstance(node, list):
            return [self._resolve(item, f"{at}[{i}]", active) for i, item in enumerate(node)]
        if not isinstance(node, dict):
            return node
        ref = node.get("$ref")
        if isinstance(ref, str) and ref.startswith("#"):
            target = _pointer(self.root, ref)
            if ref in active:
                cut = {k: v for k, v in node.items() if k != "$ref"} | _shallow(target)
                self.repairer.note(
                    _at(at, "$ref"), f"{ref} refers to itself, cut to {json.dumps(cut)}"
                )
                return cut
            if isinstance(target, dict):
                merged = {**target, **{k: v for k, v in node.items() if k != "$ref"}}
                self.repairer.note(_at(at, "$ref"), f"{ref} inlined")
                return self._resolve(merged, at, (*active, ref))
        return {
            key: value
            if key in _DEFINITIONS and not at
            else self._resolve(value, _at(at, key), active)
            for key, value in node.items()
        }


def _shallow(target: Any) -> dict[str, Any]:
    """What is left of a schema at a cycle: its type, nothing below it."""
    if not isinstance(target, dict):
        return {}
    kind = target.get("type") or ("object" if "properties" in target else None)
    return {"type": kind} if kind else {}


def _pointer(root: Any, ref: str) -> Any:
    node = root
    for part in ref[1:].split("/")[1:] if ref.startswith("#/") else []:
        part = part.replace("~1", "/").replace("~0", "~")
        if isinstance(node, dict) and part in node:
            node = node[part]
        elif isinstance(node, list) and part.isdigit() and int(part) < len(node):
            node = node[int(part)]
        else:
            return None
    return node if ref.startswith("#/") else None


def repair_input_schema(
    schema: Any, options: RepairConfig, base: str = "inputSchema"
) -> tuple[Any, list[Change]]:
    """A repaired copy of `schema` and what changed."""
    repairer = _Repairer(options, base)
    return repairer.root(schema), repairer.changes
