"""Reading a JSON file that someone else may have written (the gateway's `.mcp.json`, its
children's kept listings), bounded before anything is trusted (specs/gateway.md, "Errors").
Kept light: the config is read before the gateway imports the rest of itself."""

from __future__ import annotations

import os
import re
import stat
from pathlib import Path
from typing import Any

import orjson

#: A `.mcp.json` is a few kilobytes; a thousand servers with long settings fit in this.
MAX_CONFIG_BYTES = 1024 * 1024
#: A config nests about six levels (mcpServers.x.tools.t.annotations.title); other clients'
#: settings in the same file a few more.
MAX_CONFIG_DEPTH = 64


class ConfigError(ValueError):
    """A bad config: one line naming the file, the entry and what is wrong. What the file
    says is quoted in it (a key, a value): its control characters are escaped, so a key with
    a newline or a terminal escape in it cannot make the line two, or rewrite the terminal."""

    def __init__(self, message: str) -> None:
        super().__init__(_CONTROL.sub(_escaped, message))


_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


def _escaped(match: re.Match[str]) -> str:
    return repr(match.group())[1:-1]


class JsonFileError(ValueError):
    """Why the file cannot be used, in a few words (the caller names the file)."""


def read_json_file(path: Path, *, max_bytes: int, max_depth: int) -> Any:
    """The file's JSON value; JsonFileError when it is not a bounded, strict JSON file.
    Raises FileNotFoundError when there is no file."""
    return parse_json(read_bounded(path, max_bytes), max_depth=max_depth)


def read_bounded(path: Path, max_bytes: int) -> bytes:
    """The bytes of a regular file of at most `max_bytes`."""
    flags = os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(path, flags)
    except FileNotFoundError:
        raise
    except OSError as error:
        raise JsonFileError(f"cannot read it: {error.strerror or error}") from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise JsonFileError("not a regular file")
        if info.st_size > max_bytes:
            raise JsonFileError(f"{info.st_size} bytes, over the limit of {max_bytes} bytes")
        with open(fd, "rb", closefd=False) as file:
            data = file.read(max_bytes + 1)
    except OSError as error:
        raise JsonFileError(f"cannot read it: {error.strerror or error}") from None
    finally:
        os.close(fd)
    if len(data) > max_bytes:  # it grew while we looked
        raise JsonFileError(f"over the limit of {max_bytes} bytes")
    return data


def parse_json(data: bytes | str, *, max_depth: int) -> Any:
    """Strict JSON nested at most `max_depth` levels (orjson stops at 1024 on its own)."""
    try:
        value = orjson.loads(data)
    except orjson.JSONDecodeError as error:
        if "depth" in error.msg or "recursion" in error.msg:
            raise JsonFileError(f"nests deeper than {max_depth} levels") from None
        raise JsonFileError(
            f"not valid JSON: {error.msg} (line {error.lineno}, column {error.colno})"
        ) from None
    if nests_deeper_than(value, max_depth):
        raise JsonFileError(f"nests deeper than {max_depth} levels")
    return value


def nests_deeper_than(value: Any, limit: int) -> bool:
    """Whether `value` nests deeper than `limit` (read without recursion)."""
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if depth > limit:
            return True
        if isinstance(item, dict):
            stack.extend((child, depth + 1) for child in item.values())
        elif isinstance(item, list):
            stack.extend((child, depth + 1) for child in item)
    return False
