"""Matching URIs against resource templates (RFC 6570 level 1 and 2 expressions).

`{var}` matches one path segment (no `/`, `?` or `#`); `{+var}` matches anything.
"""

from __future__ import annotations

import re
from functools import lru_cache

_VARIABLE = re.compile(r"\{(\+?)([A-Za-z0-9_]+)\}")


def variables(template: str) -> list[str]:
    return [found.group(2) for found in _VARIABLE.finditer(template)]


@lru_cache(maxsize=4096)
def compile_template(template: str) -> re.Pattern[str]:
    parts = []
    position = 0
    for found in _VARIABLE.finditer(template):
        parts.append(re.escape(template[position : found.start()]))
        reserved, name = found.groups()
        parts.append(f"(?P<{name}>{'.+' if reserved else '[^/?#]+'})")
        position = found.end()
    parts.append(re.escape(template[position:]))
    return re.compile("".join(parts))


def match(template: str, uri: str) -> dict[str, str] | None:
    """The template's variables as found in `uri`, or None when it does not match."""
    found = compile_template(template).fullmatch(uri)
    return found.groupdict() if found else None
