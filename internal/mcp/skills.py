"""The Skills extension's vocabulary (`io.modelcontextprotocol/skills`, SEP-2640; specs/skills.md):
its identifier, limits and errors, a SKILL.md's frontmatter, and the digests both sides
compute. Serving skills is the server library's (codex_mcp.server.skills); verifying them the
client's (codex_mcp.client.skills)."""

from __future__ import annotations

import hashlib
import math
import re
from typing import Any, Final

from .errors import McpError
from .jsonrpc import INVALID_PARAMS, JsonObject

SKILLS_EXTENSION: Final = "io.modelcontextprotocol/skills"
#: A directory resource's mimeType (resources/directory/read lists its children).
DIRECTORY_MIME: Final = "inode/directory"
SKILL_FILE: Final = "SKILL.md"
#: The per-skill limits every host must accept (a server should not serve more).
MAX_RESOURCES_PER_SKILL: Final = 512
MAX_SKILL_BYTES: Final = 16 * 1024 * 1024
#: The frontmatter block read at most, and the nodes (a shared YAML alias counts each
#: time it is reached) and depth it may hold: an alias bomb or a deep nest is refused
#: before it is rendered as JSON.
MAX_FRONTMATTER_BYTES: Final = 64 * 1024
MAX_FRONTMATTER_NODES: Final = 10_000
MAX_FRONTMATTER_DEPTH: Final = 32
#: The Agent Skills naming rule: 1-64 lowercase letters, digits and single hyphens inside.
SKILL_NAME: Final = re.compile(r"^(?!.*--)[a-z0-9]([a-z0-9-]{0,62}[a-z0-9])?$")

_FRONTMATTER = re.compile(r"^---[ \t]*\r?\n(.*?)\r?\n---[ \t]*(?:\r?\n|$)", re.DOTALL)


class UnknownSkill(McpError):
    """skills/get of a URI that names no skill this server serves (-32602)."""

    def __init__(self, uri: str) -> None:
        super().__init__(INVALID_PARAMS, f"No skill is served at {uri}", {"uri": uri})
        self.uri = uri


class NotADirectory(McpError):
    """resources/directory/read of a URI that is no directory resource (-32602)."""

    def __init__(self, uri: str) -> None:
        super().__init__(INVALID_PARAMS, f"{uri} is not a directory resource", {"uri": uri})
        self.uri = uri


class BadFrontmatter(ValueError):
    """A SKILL.md whose frontmatter is missing, not YAML, or not what the format requires."""


def skills_settings(features: frozenset[str]) -> JsonObject:
    """The extension's settings a server with these provider features declares."""
    return {"directoryRead": True} if "directories" in features else {}


def digest(data: bytes) -> str:
    """`sha256:{64 lowercase hex}` of raw bytes, as a skill entry carries it."""
    return "sha256:" + hashlib.sha256(data).hexdigest()


def parse_frontmatter(text: str) -> JsonObject:
    """The YAML frontmatter leading a SKILL.md, as a JSON object with a string `name` and
    `description`. Scalars YAML would turn into dates stay strings (JSON has no dates);
    aliases are expanded but counted, so a bomb is refused (BadFrontmatter)."""
    if text.startswith("\ufeff"):
        text = text[1:]
    found = _FRONTMATTER.match(text[: MAX_FRONTMATTER_BYTES + 8])
    if found is None:
        raise BadFrontmatter("SKILL.md does not begin with a --- delimited frontmatter block")
    import yaml  # only a server or client that handles skills pays for it

    try:
        value = yaml.load(found.group(1), Loader=_loader())
    except yaml.YAMLError as exc:
        raise BadFrontmatter(f"the frontmatter is not YAML: {_first_line(exc)}") from None
    if not isinstance(value, dict):
        raise BadFrontmatter("the frontmatter is not a mapping")
    _check_json(value, [MAX_FRONTMATTER_NODES], 0)
    for key in ("name", "description"):
        if not isinstance(value.get(key), str) or not value[key]:
            raise BadFrontmatter(f"the frontmatter has no non-empty string {key!r}")
    return value


def skill_name_of(uri: str) -> str | None:
    """The skill name a SKILL.md URI ends in (`scheme://path/NAME/SKILL.md`), or None."""
    _scheme, sep, rest = uri.partition("://")
    parts = [part for part in rest.split("/") if part]
    if not sep or len(parts) < 2 or parts[-1] != SKILL_FILE:
        return None
    return parts[-2]


def _loader() -> Any:
    global _LOADER
    if _LOADER is None:
        import yaml

        class StringDates(yaml.SafeLoader):
            """SafeLoader whose timestamps stay the strings the author wrote."""

        StringDates.yaml_implicit_resolvers = {
            first: [
                (tag, regexp) for tag, regexp in resolvers if tag != "tag:yaml.org,2002:timestamp"
            ]
            for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
        }
        _LOADER = StringDates
    return _LOADER


_LOADER: Any = None


def _check_json(value: Any, budget: list[int], depth: int) -> None:
    budget[0] -= 1
    if budget[0] < 0:
        raise BadFrontmatter(f"the frontmatter holds more than {MAX_FRONTMATTER_NODES} values")
    if depth > MAX_FRONTMATTER_DEPTH:
        raise BadFrontmatter(f"the frontmatter nests deeper than {MAX_FRONTMATTER_DEPTH}")
    if isinstance(value, dict):
        for key, item in value.items():
            if not isinstance(key, str):
                raise BadFrontmatter(f"the frontmatter has a key that is not a string: {key!r}")
            _check_json(item, budget, depth + 1)
    elif isinstance(value, list):
        for item in value:
            _check_json(item, budget, depth + 1)
    elif value is not None and not isinstance(value, str | int | float | bool):
        raise BadFrontmatter(f"the frontmatter holds a {type(value).__name__}, not JSON")
    elif isinstance(value, float) and not math.isfinite(value):
        raise BadFrontmatter("the frontmatter holds a number JSON cannot carry")


def _first_line(exc: Exception) -> str:
    return str(exc).splitlines()[0] if str(exc) else type(exc).__name__


__all__ = [
    "DIRECTORY_MIME",
    "MAX_RESOURCES_PER_SKILL",
    "MAX_SKILL_BYTES",
    "SKILLS_EXTENSION",
    "SKILL_FILE",
    "SKILL_NAME",
    "BadFrontmatter",
    "NotADirectory",
    "UnknownSkill",
    "digest",
    "parse_frontmatter",
    "skill_name_of",
    "skills_settings",
]
