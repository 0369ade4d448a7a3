"""Tool definitions Codex cannot read, which cost the whole server (specs/gateway.md, "What
Codex does to MCP tools": Unreadable definitions)."""

from __future__ import annotations

from typing import Any

#: The annotation hints, snake case (the Rust codex-mcp crate's serde) -> camelCase.
ANNOTATION_FIELDS = {
    "read_only_hint": "readOnlyHint",
    "destructive_hint": "destructiveHint",
    "idempotent_hint": "idempotentHint",
    "open_world_hint": "openWorldHint",
}
#: The annotation hints, camelCase (booleans in a definition Codex can read).
ANNOTATION_HINTS = tuple(ANNOTATION_FIELDS.values())


def definition_problems(tool: Any) -> list[str]:
    """Why Codex cannot read this tool definition (empty when it can)."""
    if not isinstance(tool, dict):
        return [f"a tool must be an object, not {json_kind(tool)}"]
    problems = []
    if not isinstance(tool.get("name"), str):
        problems.append(f'"name" must be a string, not {json_kind(tool.get("name"))}')
    schema = tool.get("inputSchema")
    if not isinstance(schema, dict):
        if schema is None and "input_schema" in tool:
            problems.append('"inputSchema" is missing (the tool has a snake-case "input_schema")')
        else:
            problems.append(f'"inputSchema" must be an object, not {json_kind(schema)}')
    for key in ("title", "description"):
        if tool.get(key) is not None and not isinstance(tool[key], str):
            problems.append(f'"{key}" must be a string, not {json_kind(tool[key])}')
    for key in ("outputSchema", "_meta"):
        if tool.get(key) is not None and not isinstance(tool[key], dict):
            problems.append(f'"{key}" must be an object, not {json_kind(tool[key])}')
    annotations = tool.get("annotations")
    if annotations is not None:
        if not isinstance(annotations, dict):
            problems.append(f'"annotations" must be an object, not {json_kind(annotations)}')
        else:
            if annotations.get("title") is not None and not isinstance(annotations["title"], str):
                problems.append('"annotations.title" must be a string')
            problems += [
                f'"annotations.{hint}" must be true or false, not {json_kind(annotations[hint])}'
                for hint in ANNOTATION_HINTS
                if annotations.get(hint) is not None and not isinstance(annotations[hint], bool)
            ]
    icons = tool.get("icons")
    if icons is not None and not (
        isinstance(icons, list)
        and all(isinstance(i, dict) and isinstance(i.get("src"), str) for i in icons)
    ):
        problems.append('"icons" must be a list of objects with a "src" string')
    return problems


def json_kind(value: Any) -> str:
    """What a JSON value is, for messages: 'a string', 'an object', 'null'..."""
    if value is None:
        return "null"
    return next((name for kind, name in _KINDS if isinstance(value, kind)), "an object")


#: bool first: a boolean is an int to isinstance.
_KINDS = ((bool, "a boolean"), (int | float, "a number"), (str, "a string"), (list, "a list"))
