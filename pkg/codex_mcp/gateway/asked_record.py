"""What a shared child was seen to send during calls that the gateway could not tie to its
call (a question, a log line), kept beside its listing in the cache so `codex-mcp lint` can
name the server and the fix later (specs/gateway.md, "Relaying": Which call). Reading or
writing it never fails the gateway or lint."""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path

from .children.listing_cache import cache_directory, cache_key
from .config.json_file import JsonFileError, read_json_file
from .config.model import ServerConfig

_FORMAT = 1
#: A handful of method names: anything bigger is not ours.
_MAX_BYTES = 4096
#: What is recorded: the client's methods, and one word for log lines.
KINDS = ("elicitation/create", "sampling/createMessage", "roots/list", "logging")


def record_path(server: ServerConfig, directory: Path | None = None) -> Path:
    """Keyed by what starts the child (its target), whatever it is told it can ask."""
    return (directory or cache_directory()) / f"{cache_key(server, {})}.asked.json"


def recorded(server: ServerConfig, directory: Path | None = None) -> list[str]:
    """The kinds the gateway saw the server send during calls unattributed (or none)."""
    try:
        document = read_json_file(record_path(server, directory), max_bytes=_MAX_BYTES, max_depth=3)
    except (FileNotFoundError, JsonFileError, OSError):
        return []
    if not isinstance(document, dict) or document.get("format") != _FORMAT:
        return []
    kinds = document.get("kinds")
    return [k for k in KINDS if isinstance(kinds, list) and k in kinds]


def record(server: ServerConfig, kind: str, directory: Path | None = None) -> None:
    """Add `kind` to the server's record (atomically; a failure is ignored)."""
    if kind not in KINDS:
        return
    kinds = recorded(server, directory)
    if kind in kinds:
        return
    path = record_path(server, directory)
    document = {"format": _FORMAT, "server": server.name, "kinds": [*kinds, kind]}
    try:
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        fd, temporary = tempfile.mkstemp(dir=path.parent, suffix=".tmp")
    except OSError:
        return
    try:
        with os.fdopen(fd, "w") as file:
            json.dump(document, file)
        os.replace(temporary, path)
    except OSError:
        Path(temporary).unlink(missing_ok=True)
