"""Repairs of tool definitions (and two snake-case result fields); call arguments are never
touched (specs/gateway.md, "Repairs")."""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import Any

from .config import RepairConfig, ToolSettings
from .definition import ANNOTATION_FIELDS, ANNOTATION_HINTS
from .repair_schema import Change, repair_input_schema, stringify

#: Fields of servers written in the style of the Rust codex-mcp crate (serde snake_case).
DEFINITION_FIELDS = {"input_schema": "inputSchema", "output_schema": "outputSchema"}
RESULT_FIELDS = {"is_error": "isError", "structured_content": "structuredContent"}


@dataclass
class RepairedTool:
    tool: dict[str, Any]
    changes: list[Change] = field(default_factory=list)
    #: Set when the tool cannot be served at all (no usable name).
    dropped: str | None = None


def repair_tool(tool: Any, options: RepairConfig | None = None) -> RepairedTool:
    """A repaired copy of one tool definition from a child's `tools/list`."""
    options = options or RepairConfig()
    if not isinstance(tool, dict):
        return RepairedTool({}, [], f"not an object: {str(tool)[:40]}")
    out = copy.copy(tool)
    changes: list[Change] = []
    if options.camel_case:
        _camel_case(out, changes)
    if not isinstance(out.get("name"), str) or not out["name"]:
        return RepairedTool(out, changes, "it has no name (a string), so it cannot be called")
    if options.fix_shapes:
        _fix_definition(out, changes)
    if "inputSchema" in out or options.fix_shapes:
        schema, schema_changes = repair_input_schema(out.get("inputSchema", {}), options)
        out["inputSchema"] = schema
        changes += schema_changes
    return RepairedTool(out, changes)


def _camel_case(tool: dict[str, Any], changes: list[Change]) -> None:
    for snake, camel in DEFINITION_FIELDS.items():
        if snake in tool and camel not in tool:
            tool[camel] = tool.pop(snake)
            changes.append(Change(snake, f"renamed {camel}"))
    annotations = tool.get("annotations")
    if isinstance(annotations, dict) and any(k in annotations for k in ANNOTATION_FIELDS):
        annotations = dict(annotations)
        for snake, camel in ANNOTATION_FIELDS.items():
            if snake in annotations and camel not in annotations:
                annotations[camel] = annotations.pop(snake)
                changes.append(Change(f"annotations.{snake}", f"renamed {camel}"))
        tool["annotations"] = annotations


def _fix_definition(tool: dict[str, Any], changes: list[Change]) -> None:
    """Fields whose wrong type makes Codex reject the child's whole tools/list."""
    for key in ("title", "description"):
        done = stringify(tool, key)
        if done is not None:
            changes.append(Change(key, done))
    for key in ("outputSchema", "_meta"):
        if tool.get(key) is not None and not isinstance(tool[key], dict):
            del tool[key]
            changes.append(Change(key, "not an object, dropped"))
    annotations = tool.get("annotations")
    if annotations is not None and not isinstance(annotations, dict):
        del tool["annotations"]
        changes.append(Change("annotations", "not an object, dropped"))
    elif isinstance(annotations, dict):
        fixed = dict(annotations)
        for hint in ANNOTATION_HINTS:
            value = fixed.get(hint)
            if value is not None and not isinstance(value, bool):
                if value in ("true", "false"):
                    fixed[hint] = value == "true"
                    changes.append(Change(f"annotations.{hint}", f"{value!r} made a boolean"))
                else:
                    del fixed[hint]
                    changes.append(Change(f"annotations.{hint}", "not a boolean, dropped"))
        if fixed.get("title") is not None and not isinstance(fixed["title"], str):
            del fixed["title"]
            changes.append(Change("annotations.title", "not a string, dropped"))
        tool["annotations"] = fixed
    icons = tool.get("icons")
    if icons is not None:
        good = (
            [i for i in icons if isinstance(i, dict) and isinstance(i.get("src"), str)]
            if isinstance(icons, list)
            else []
        )
        if good != icons:
            if good:
                tool["icons"] = good
            else:
                del tool["icons"]
            changes.append(Change("icons", "entries without a string src dropped"))
    if not isinstance(tool.get("inputSchema"), dict):
        what = "missing" if "inputSchema" not in tool else "not an object"
        tool["inputSchema"] = {"type": "object", "properties": {}}
        changes.append(Change("inputSchema", f"{what}, set to an empty object schema"))


def apply_tool_settings(tool: dict[str, Any], settings: ToolSettings | None) -> RepairedTool:
    """The config's per-tool description and annotations over a (repaired) definition.
    Hiding and renaming are the name table's business (naming.NameTable)."""
    if settings is None or (settings.description is None and not settings.annotations):
        return RepairedTool(tool)
    out = dict(tool)
    changes = []
    if settings.description is not None:
        out["description"] = settings.description
        changes.append(Change("description", "replaced by the config"))
    if settings.annotations:
        current = out.get("annotations")
        out["annotations"] = {
            **(current if isinstance(current, dict) else {}),
            **settings.annotations,
        }
        changes += [
            Change(f"annotations.{k}", f"set to {v!r} by the config")
            for k, v in settings.annotations.items()
        ]
    return RepairedTool(out, changes)


def normalize_result(result: dict[str, Any]) -> dict[str, Any]:
    """`is_error` -> `isError`, `structured_content` -> `structuredContent` in a tool's result
    (Rust servers that serialize snake_case answer so, and Codex would read such an error as a
    success). Cheap when there is nothing to do: the same object comes back."""
    if not isinstance(result, dict) or not ("is_error" in result or "structured_content" in result):
        return result
    out = dict(result)
    for snake, camel in RESULT_FIELDS.items():
        if snake in out:
            value = out.pop(snake)
            out.setdefault(camel, value)
    return out
