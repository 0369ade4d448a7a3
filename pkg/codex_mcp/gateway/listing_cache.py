"""Each child's last good tool listing, kept on disk so the next gateway can serve it at once.

Codex 0.169 lists a server's tools once, at startup, and ignores `list_changed`: a child
slower to start than Codex waits would never be seen. The gateway answers its first
`tools/list` from this cache while the child starts (a call to it waits for it), and
replaces the entry whenever the child lists something else.

One file per child under `$XDG_CACHE_HOME/codex-mcp/listings/` (else `~/.cache/...`), named
by a hash of what starts the child (command, args, env, cwd; or URL, headers, transport)
and what it is told its client can do (a server may list tools by it): the same server
under another name shares it, a changed command does not. The file holds
the child's raw listing (repairs and settings run on it as on a live one), never the key's
parts (an `env` may hold secrets). Reading or writing it never fails the gateway.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import logging
import os
import tempfile
from collections.abc import Mapping
from pathlib import Path

from codex_mcp.core.jsonrpc import JsonObject

from .config_model import ServerConfig

log = logging.getLogger("codex_mcp.gateway")

CACHE_DIR_ENV = "XDG_CACHE_HOME"
_FORMAT = 1


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


class ListingCache:
    def __init__(self, directory: Path) -> None:
        self.directory = directory

    def path(self, server: ServerConfig, capabilities: JsonObject) -> Path:
        return self.directory / f"{cache_key(server, capabilities)}.json"

    def load(self, server: ServerConfig, capabilities: JsonObject) -> list[JsonObject] | None:
        """The child's last good listing, or None (none kept, or unreadable)."""
        try:
            document = json.loads(self.path(server, capabilities).read_text(encoding="utf-8"))
        except FileNotFoundError:
            return None
        except (OSError, ValueError) as error:
            log.debug("%s: cached listing not read: %s", server.name, error)
            return None
        tools = document.get("tools") if isinstance(document, dict) else None
        if document.get("format") != _FORMAT or not isinstance(tools, list):
            return None
        return [tool for tool in tools if isinstance(tool, dict)]

    def save(self, server: ServerConfig, capabilities: JsonObject, tools: list[JsonObject]) -> None:
        """Replace the child's entry (atomically: a reader sees the old or the new one)."""
        path = self.path(server, capabilities)
        try:
            self.directory.mkdir(parents=True, exist_ok=True, mode=0o700)
            fd, temporary = tempfile.mkstemp(dir=self.directory, suffix=".tmp")
        except OSError as error:
            log.debug("%s: listing not cached: %s", server.name, error)
            return
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as file:
                json.dump({"format": _FORMAT, "tools": tools}, file, separators=(",", ":"))
            os.replace(temporary, path)
        except (OSError, TypeError, ValueError) as error:
            log.debug("%s: listing not cached: %s", server.name, error)
            Path(temporary).unlink(missing_ok=True)
