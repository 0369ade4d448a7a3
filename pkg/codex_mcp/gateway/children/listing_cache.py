"""Each child's last good tool listing, and what it declared then, kept on disk so the next
gateway serves the listing at once and declares what the child offers before it is up
(specs/gateway.md, "Serving": The first list is complete). Reading or writing it never fails
the gateway."""

from __future__ import annotations

import dataclasses
import hashlib
import json
import logging
import os
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import orjson

from codex_mcp.core.jsonrpc import JsonObject

from ..config.json_file import JsonFileError, nests_deeper_than, read_json_file
from ..config.model import ServerConfig
from .tools import MAX_DEFINITION_DEPTH

log = logging.getLogger("codex_mcp.gateway")

CACHE_DIR_ENV = "XDG_CACHE_HOME"
_FORMAT = 1
#: A listing is one message or a few pages of them: far below this.
MAX_CACHE_BYTES = 32 * 1024 * 1024
#: The file's object, its tool list, and a definition as deep as a catalog keeps one.
_MAX_DEPTH = MAX_DEFINITION_DEPTH + 2


def cache_directory(environ: Mapping[str, str] | None = None) -> Path:
    """`$XDG_CACHE_HOME/codex-mcp/listings`, else `~/.cache/codex-mcp/listings` (a relative
    XDG_CACHE_HOME is ignored, as the XDG spec says)."""
    env = os.environ if environ is None else environ
    base = env.get(CACHE_DIR_ENV, "")
    root = Path(base) if base and os.path.isabs(base) else Path.home() / ".cache"
    return root / "codex-mcp" / "listings"


def cache_key(server: ServerConfig, capabilities: JsonObject) -> str:
    """What starts the child, hashed: its command line and environment, or its URL and
    headers; and the client capabilities it is told."""
    target = dataclasses.asdict(server.target)
    parts = [type(server.target).__name__, target, capabilities]
    text = json.dumps(parts, sort_keys=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:32]


@dataclasses.dataclass(frozen=True, slots=True)
class Kept:
    tools: list[JsonObject]
    #: The capabilities the child declared when it listed them (None: a file from before
    #: they were kept).
    capabilities: JsonObject | None = None


class ListingCache:
    def __init__(self, directory: Path) -> None:
        self.directory = directory

    def path(self, server: ServerConfig, capabilities: JsonObject) -> Path:
        return self.directory / f"{cache_key(server, capabilities)}.json"

    def load(self, server: ServerConfig, capabilities: JsonObject) -> Kept | None:
        """The child's last good listing, or None (none kept, or an unusable one: said once)."""
        path = self.path(server, capabilities)
        try:
            document = read_json_file(path, max_bytes=MAX_CACHE_BYTES, max_depth=_MAX_DEPTH)
            return _kept_of(document)
        except FileNotFoundError:
            return None
        except JsonFileError as error:
            log.warning(
                "%s: its kept tool listing (%s) is unusable: %s; ignored, and rewritten once "
                "the server lists its tools",
                server.name, path, error,
            )  # fmt: skip
            return None

    def save(
        self,
        server: ServerConfig,
        capabilities: JsonObject,
        tools: list[JsonObject],
        offered: JsonObject | None = None,
    ) -> None:
        """Replace the child's entry (atomically: a reader sees the old or the new one)."""
        path = self.path(server, capabilities)
        try:
            self.directory.mkdir(parents=True, exist_ok=True, mode=0o700)
            fd, temporary = tempfile.mkstemp(dir=self.directory, suffix=".tmp")
        except OSError as error:
            log.debug("%s: listing not cached: %s", server.name, error)
            return
        try:
            kept = [tool for tool in tools if _usable(tool)]  # what load would refuse
            document: JsonObject = {"format": _FORMAT, "tools": kept}
            if offered is not None:
                document["capabilities"] = offered
            with os.fdopen(fd, "wb") as file:
                file.write(orjson.dumps(document))
            os.replace(temporary, path)
        except (OSError, TypeError, ValueError) as error:  # orjson's encode error is a TypeError
            log.debug("%s: listing not cached: %s", server.name, error)
            Path(temporary).unlink(missing_ok=True)


def _usable(tool: Any) -> bool:
    """A tool definition a catalog can take: an object with a string name, not nested
    deeper than a catalog keeps (the rest of it is repaired as a live listing is)."""
    return (
        isinstance(tool, dict)
        and isinstance(tool.get("name"), str)
        and not nests_deeper_than(tool, MAX_DEFINITION_DEPTH)
    )


def _kept_of(document: Any) -> Kept:
    """A kept listing, every value type-checked (JsonFileError: not one)."""
    if not isinstance(document, dict):
        raise JsonFileError(f"not an object: {type(document).__name__}")
    if document.get("format") != _FORMAT:
        raise JsonFileError(f"format {document.get('format')!r}, not {_FORMAT}")
    tools = document.get("tools")
    if not isinstance(tools, list):
        raise JsonFileError('"tools" is not a list')
    if not all(_usable(tool) for tool in tools):
        raise JsonFileError("a tool in it is not an object with a name")
    capabilities = document.get("capabilities")
    if capabilities is not None and not isinstance(capabilities, dict):
        raise JsonFileError('"capabilities" is not an object')
    return Kept(tools, capabilities)
