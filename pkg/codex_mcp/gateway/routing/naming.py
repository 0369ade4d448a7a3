"""The gateway's tool names: `server__tool`, safe for Codex as they are (specs/gateway.md,
"Names")."""

from __future__ import annotations

from dataclasses import dataclass, field

# Codex's own rules (characters, hash suffix), so our names are ones it keeps as they are.
from codex_mcp.codex_compat.names import hash_suffix, sanitize

SEPARATOR = "__"
sanitize_name = sanitize
MAX_NAME_LENGTH = 64


def _identity(server: str, tool: str) -> str:
    return f"{server}\0{tool}"


def with_hash(name: str, identity: str, max_length: int = MAX_NAME_LENGTH) -> str:
    """`name` cut to fit `max_length` with the hash suffix of `identity` appended."""
    suffix = hash_suffix(identity)
    return name[: max_length - len(suffix)] + suffix


def exposed_name(
    prefix: str | None, tool: str, *, server: str | None = None, max_length: int = MAX_NAME_LENGTH
) -> str:
    """`prefix__tool` sanitized, hashed when longer than `max_length`. No prefix (passthrough):
    the tool name alone. `server` (default: `prefix`) is the raw name hashed with the tool."""
    name = sanitize_name(tool)
    if prefix:
        name = f"{sanitize_name(prefix)}{SEPARATOR}{name}"
    if len(name) <= max_length:
        return name
    raw_server = server if server is not None else prefix or ""
    return with_hash(name, _identity(raw_server, tool), max_length)


@dataclass(frozen=True, slots=True)
class NamedTool:
    server: str
    tool: str
    name: str
    #: Why `name` is not simply `server__tool`: "sanitized", "shortened", "collision".
    changes: tuple[str, ...] = ()


@dataclass
class NameTable:
    """Exposed names assigned in a stable order. `route(name)` answers (server, tool)."""

    max_length: int = MAX_NAME_LENGTH
    tools: list[NamedTool] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    _by_name: dict[str, NamedTool] = field(default_factory=dict)
    _by_source: dict[tuple[str, str], NamedTool] = field(default_factory=dict)

    def add(
        self, server: str, tool: str, *, prefix: str | None = None, rename: str | None = None
    ) -> NamedTool | None:
        """Name `tool` of `server` (under `prefix`, default the server's name; "" for none),
        optionally renamed. None when it duplicates a tool already named (first wins)."""
        source = (server, tool)
        if source in self._by_source:
            self.warnings.append(f"{server}: tool {tool!r} is listed twice; the first is kept")
            return None
        prefix = server if prefix is None else prefix
        wanted = rename if rename is not None else tool
        name = exposed_name(prefix, wanted, server=server, max_length=self.max_length)
        changes = []
        plain = f"{prefix}{SEPARATOR}{wanted}" if prefix else wanted
        if sanitize_name(plain) != plain:
            changes.append("sanitized")
        if name != sanitize_name(plain):
            changes.append("shortened")
        holder = self._by_name.get(name)
        if holder is not None:
            if rename is not None:
                self.warnings.append(
                    f"{server}: tool {tool!r} renamed to {name!r}, which {holder.server}'s "
                    f"{holder.tool!r} already has; the first is kept"
                )
                return None
            base, identity, attempt = name, _identity(server, tool), 0
            name = with_hash(base, identity, self.max_length)
            while name in self._by_name:  # a hash collision: practically never
                attempt += 1
                name = with_hash(base, f"{identity}\0{attempt}", self.max_length)
            changes.append("collision")
            self.warnings.append(
                f"{server}: tool {tool!r} is named {name!r}: {holder.server}'s {holder.tool!r} "
                "already has its plain name"
            )
        named = NamedTool(server, tool, name, tuple(changes))
        self._by_name[name] = named
        self._by_source[source] = named
        self.tools.append(named)
        return named

    def route(self, name: str) -> tuple[str, str] | None:
        named = self._by_name.get(name)
        return (named.server, named.tool) if named else None

    def name_of(self, server: str, tool: str) -> str | None:
        named = self._by_source.get((server, tool))
        return named.name if named else None
