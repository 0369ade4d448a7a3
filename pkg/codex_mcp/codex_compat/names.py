"""The names Codex gives MCP tools, `mcp__<server>` + tool (specs/gateway.md, "What Codex
does to MCP tools": Namespaces to Duplicates)."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

MAX_TOOL_NAME_LENGTH = 128
DELIMITER = "__"
PREFIX = "mcp__"
HASH_LENGTH = 12
_UNSAFE = re.compile(r"[^A-Za-z0-9_]")


def sanitize(name: str) -> str:
    """Every character outside [A-Za-z0-9_] becomes `_`; empty becomes `_`."""
    return _UNSAFE.sub("_", name) or "_"


def hash_suffix(identity: str) -> str:
    """`_` and the first 12 hex of the SHA-1 of `identity`: how Codex tells names apart."""
    return "_" + hashlib.sha1(identity.encode()).hexdigest()[:HASH_LENGTH]


@dataclass(frozen=True, slots=True)
class CodexName:
    server: str
    tool: str
    #: None when Codex skips the tool as a duplicate.
    namespace: str | None
    name: str | None
    #: What happened to the name: "sanitized", "namespace collision", "collision", "too long",
    #: "duplicate" (skipped).
    changes: tuple[str, ...] = ()

    @property
    def qualified(self) -> str | None:
        """How people write it: `mcp__server__tool`."""
        return f"{self.namespace}{DELIMITER}{self.name}" if self.name is not None else None


def qualify_tool_name(server: str, tool: str) -> str:
    """`mcp__<server>__<tool>` as Codex names one tool of a server (a name that collides
    with another tool's after sanitizing is hashed too: `codex_names` sees the whole list).

    >>> qualify_tool_name("shell", "run-command")
    'mcp__shell__run_command'
    """
    qualified = codex_names([(server, [tool])])[0].qualified
    assert qualified is not None  # one tool is never a duplicate
    return qualified


def codex_names(servers: Iterable[tuple[str, Sequence[str]]]) -> list[CodexName]:
    """The names of every (server, [tool, ...]), in the order given."""
    candidates: list[dict[str, str]] = []
    skipped: list[CodexName] = []
    seen: set[str] = set()
    for server, tools in servers:
        namespace_identity = f"{server}\0{server}\0"
        for tool in tools:
            identity = f"{namespace_identity}\0{tool}\0{tool}"
            if identity in seen:
                skipped.append(CodexName(server, tool, None, None, ("duplicate",)))
                continue
            seen.add(identity)
            namespace = sanitize(server)
            namespace = namespace if namespace.startswith(PREFIX) else PREFIX + namespace
            candidates.append(
                {
                    "server": server,
                    "tool": tool,
                    "namespace": namespace,
                    "name": sanitize(tool),
                    "namespace_identity": namespace_identity,
                    "identity": identity,
                }
            )
    changes: dict[str, list[str]] = {c["identity"]: [] for c in candidates}
    for c in candidates:
        if sanitize(c["server"]) != c["server"] or c["name"] != c["tool"]:
            changes[c["identity"]].append("sanitized")
    _hash_collisions(
        candidates, ("namespace",), "namespace_identity", changes, "namespace collision"
    )
    _hash_collisions(candidates, ("namespace", "name"), "identity", changes, "collision")
    named = {c["identity"]: c for c in candidates}
    used: set[str] = set()
    for c in sorted(candidates, key=lambda c: c["identity"]):
        namespace, name = _fit(c["namespace"], c["name"], c["identity"], used)
        if (namespace, name) != (c["namespace"], c["name"]):
            changes[c["identity"]].append("too long")
        named[c["identity"]].update(namespace=namespace, name=name)
    out = [
        CodexName(c["server"], c["tool"], c["namespace"], c["name"], tuple(changes[c["identity"]]))
        for c in candidates
    ]
    return out + skipped


def _hash_collisions(
    candidates: list[dict[str, str]],
    keys: tuple[str, ...],
    identity_key: str,
    changes: dict[str, list[str]],
    label: str,
) -> None:
    identities: dict[tuple[str, ...], set[str]] = {}
    for c in candidates:
        identities.setdefault(tuple(c[k] for k in keys), set()).add(c[identity_key])
    for c in candidates:
        if len(identities[tuple(c[k] for k in keys)]) > 1:
            target = keys[-1]
            value = c[target]
            if target == "namespace" and value.endswith(DELIMITER):
                c[target] = value[: -len(DELIMITER)] + hash_suffix(c[identity_key]) + DELIMITER
            else:
                c[target] = value + hash_suffix(c[identity_key])
            changes[c["identity"]].append(label)


def _fit(namespace: str, name: str, identity: str, used: set[str]) -> tuple[str, str]:
    reserved = len(DELIMITER)
    if (
        len(namespace) + len(name) + reserved <= MAX_TOOL_NAME_LENGTH
        and namespace + name not in used
    ):
        used.add(namespace + name)
        return namespace, name
    attempt = 0
    while True:
        hash_input = identity if attempt == 0 else f"{identity}\0{attempt}"
        suffix = hash_suffix(hash_input)
        room = MAX_TOOL_NAME_LENGTH - len(namespace) - reserved
        if room >= len(suffix):
            fitted = (namespace, name[: room - len(suffix)] + suffix)
        else:
            fitted = (namespace[: MAX_TOOL_NAME_LENGTH - len(suffix) - reserved], suffix)
        if fitted[0] + fitted[1] not in used:
            used.add(fitted[0] + fitted[1])
            return fitted
        attempt += 1
