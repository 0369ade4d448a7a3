"""Reading one JSON object of a config file with exact, located error messages.

Hand-written rather than pydantic: every field has aliases (Claude Code, Cursor, VS Code and
Codex spell them differently) and each error must read `<file>: <entry>: "<key>" must be ...`,
which a model's error list would have to be translated into anyway.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from typing import Any


class ConfigError(ValueError):
    """A bad config: one line naming the file, the entry and what is wrong. What the file
    says is quoted in it (a key, a value): its control characters are escaped, so a key with
    a newline or a terminal escape in it cannot make the line two, or rewrite the terminal."""

    def __init__(self, message: str) -> None:
        super().__init__(_CONTROL.sub(_escaped, message))


_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


def _escaped(match: re.Match[str]) -> str:
    return repr(match.group())[1:-1]


#: The largest number a setting takes (seconds, counts, bytes): over 30 years of seconds.
MAX_NUMBER = 1e9

_VARIABLE = re.compile(r"\$\{(?:env:)?([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}")


def expand_variables(text: str, environ: Mapping[str, str], unset: list[str]) -> str:
    """`${VAR}`, `${VAR:-default}` (Claude Code) and `${env:VAR}` (Cursor, VS Code). An unset
    variable without a default stays as written, as in Claude Code; its name goes to `unset`."""

    def replace(match: re.Match[str]) -> str:
        name, default = match.group(1), match.group(2)
        if name in environ:
            return environ[name]
        if default is not None:
            return default
        unset.append(name)
        return match.group(0)

    return _VARIABLE.sub(replace, text) if "${" in text else text


def json_kind(value: Any) -> str:
    """What a JSON value is, for messages: 'a string', 'an object', 'null'..."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "a list"
    return "an object"


class Fields:
    """One config object: typed getters that accept a key's aliases and fail with a message
    naming `where` and the key as the user wrote it. `unknown()` lists keys nobody asked for."""

    def __init__(
        self,
        raw: Mapping[str, Any],
        where: str,
        environ: Mapping[str, str] | None = None,
    ) -> None:
        self.raw = raw
        self.where = where
        self.environ = os.environ if environ is None else environ
        self.seen: set[str] = set()
        self.unset_variables: list[str] = []

    def error(self, key: str, problem: str) -> ConfigError:
        return ConfigError(f'{self.where}: "{key}" {problem}')

    def _find(self, *names: str) -> tuple[str, Any] | None:
        found = [name for name in names if name in self.raw]
        self.seen.update(found)
        if len(found) > 1:
            raise ConfigError(
                f"{self.where}: {' and '.join(map(repr, found))} are the same setting"
            )
        return (found[0], self.raw[found[0]]) if found else None

    def has(self, *names: str) -> bool:
        return any(name in self.raw for name in names)

    def string(self, *names: str, expand: bool = False, required: bool = False) -> str | None:
        found = self._find(*names)
        if found is None or found[1] is None:
            if required:
                raise ConfigError(f'{self.where}: "{names[0]}" is missing')
            return None
        key, value = found
        if not isinstance(value, str):
            raise self.error(key, f"must be a string, not {json_kind(value)}")
        if required and not value.strip():
            raise self.error(key, "must not be empty")
        return self._expand(value) if expand else value

    def string_list(self, *names: str, expand: bool = False) -> tuple[str, ...] | None:
        found = self._find(*names)
        if found is None or found[1] is None:
            return None
        key, value = found
        if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
            raise self.error(key, "must be a list of strings")
        return tuple(self._expand(item) if expand else item for item in value)

    def string_map(self, *names: str, expand: bool = False) -> dict[str, str] | None:
        found = self._find(*names)
        if found is None or found[1] is None:
            return None
        key, value = found
        if not isinstance(value, dict):
            raise self.error(key, f"must be an object of strings, not {json_kind(value)}")
        out = {}
        for name, item in value.items():
            if isinstance(item, int | float) and not isinstance(item, bool):
                item = str(item)  # "PORT": 8080 is what people write; the child sees "8080"
            if not isinstance(item, str):
                raise ConfigError(f'{self.where}: "{key}.{name}" must be a string')
            out[name] = self._expand(item) if expand else item
        return out

    def boolean(self, *names: str) -> bool | None:
        found = self._find(*names)
        if found is None or found[1] is None:
            return None
        key, value = found
        if not isinstance(value, bool):
            raise self.error(key, f"must be true or false, not {json_kind(value)}")
        return value

    def number(self, *names: str, minimum: float = 0) -> float | None:
        found = self._find(*names)
        if found is None or found[1] is None:
            return None
        key, value = found
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise self.error(key, f"must be a number, not {json_kind(value)}")
        if value < minimum:
            raise self.error(key, f"must be at least {minimum:g}")
        if value > MAX_NUMBER:  # a timer or a count this large is a typo, and overflows
            raise self.error(key, f"must be a number no larger than {MAX_NUMBER:g}")
        return float(value)

    def integer(self, *names: str, minimum: int = 0) -> int | None:
        value = self.number(*names, minimum=minimum)
        if value is None:
            return None
        if value != int(value):
            key = next(name for name in names if name in self.raw)
            raise self.error(key, "must be a whole number")
        return int(value)

    def object(self, *names: str) -> tuple[str, dict[str, Any]] | None:
        found = self._find(*names)
        if found is None or found[1] is None:
            return None
        key, value = found
        if not isinstance(value, dict):
            raise self.error(key, f"must be an object, not {json_kind(value)}")
        return key, value

    def unknown(self) -> list[str]:
        return [key for key in self.raw if key not in self.seen]

    def _expand(self, text: str) -> str:
        return expand_variables(text, self.environ, self.unset_variables)
