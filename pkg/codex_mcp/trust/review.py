"""What is pending, as a person reviews it (specs/trust.md, "`codex-mcp trust`"): per item,
each field that changed as a diff of its text (a schema as sorted, indented JSON), every
character that does not show written as an escape (`\\u200b`, `\\u202e`, `\\x1b`), so text
hidden from a reader is in plain sight."""

from __future__ import annotations

import difflib
from typing import Any

import orjson

from codex_mcp.codex_compat import poisoning
from codex_mcp.core.log_names import printable

from .lock import Kind, LockState, Pin

#: Characters of one field's diff shown; the rest is in the lock file.
MAX_SHOWN = 20_000
INDENT = "    "


def pending_report(state: LockState) -> list[str]:
    """The lines that show every pending item (none: nothing pending)."""
    lines: list[str] = []
    for server, kind, name, pin in state.items(state.pending):
        trusted = state.get(state.trusted, server, kind, name)
        lines += item_report(server, kind, name, trusted, pin)
    return lines


def item_report(server: str, kind: Kind, name: str, trusted: Pin | None, pin: Pin) -> list[str]:
    what = "tool" if kind == "tools" else "skill"
    handle = printable(f"{server}/{name}", 300)
    if trusted is None:
        lines = [f"{handle} ({what}): new, never trusted"]
        for field, value in sorted(pin.definition.items()):
            lines.append(f"  {field}:")
            lines += _diff(None, value)
        return lines + _signs(pin)
    fields = sorted(
        key for key in {*trusted.definition, *pin.definition}
        if trusted.definition.get(key) != pin.definition.get(key)
    )  # fmt: skip
    lines = [f"{handle} ({what}): changed since trusted: {', '.join(fields)}"]
    for field in fields:
        lines.append(f"  {field}:")
        lines += _diff(trusted.definition.get(field), pin.definition.get(field))
    return lines + _signs(pin)


def _signs(pin: Pin) -> list[str]:
    """Poisoning signs in what the model would now read (codex_compat/poisoning.py)."""
    frontmatter = pin.definition.get("frontmatter")
    text = pin.definition.get("description")
    if isinstance(frontmatter, dict):
        text = frontmatter.get("description")
    return [f"  sign: {sign}" for sign in poisoning.signs(text)]


def _text(value: Any) -> list[str]:
    if value is None:
        return []
    if isinstance(value, str):
        return value.split("\n")
    return (
        orjson.dumps(value, option=orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS).decode().split("\n")
    )


def _diff(old: Any, new: Any) -> list[str]:
    before, after = _text(old), _text(new)
    if old is None or new is None:
        body = [("- " if new is None else "+ ") + line for line in before or after]
    else:
        body = [
            line
            for line in difflib.unified_diff(before, after, lineterm="", n=2)
            if not line.startswith(("---", "+++"))
        ]
        body = [line if line.startswith("@@") else f"{line[:1]} {line[1:]}" for line in body]
    shown, left = [], MAX_SHOWN
    for line in body:
        visible = printable(line, left)
        shown.append(INDENT + visible)
        left -= len(line)
        if left <= 0:
            shown.append(f"{INDENT}(the rest is not shown here: read it in the lock file)")
            break
    return shown
