"""The MCP Server Card (SEP-2127, the draft extension `io.modelcontextprotocol/server-card`):
the document a server publishes about itself and what a client accepts as one
(specs/http.md, "The server card")."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Final

from .jsonrpc import JsonObject

EXTENSION: Final = "io.modelcontextprotocol/server-card"
MEDIA_TYPE: Final = "application/mcp-server-card+json"
SCHEMA_URL: Final = "https://static.modelcontextprotocol.io/schemas/v1/server-card.schema.json"
#: Where a card is, relative to the Streamable HTTP endpoint's URL (the extension's
#: recommended place: `<streamable-http-url>/server-card`).
CARD_SUFFIX: Final = "/server-card"

#: The schema's bounds (schema.ts: ServerCard).
NAME_PATTERN: Final = re.compile(r"[a-zA-Z0-9.-]+/[a-zA-Z0-9._-]+")
NAME_MAX: Final = 200
DESCRIPTION_MAX: Final = 100
TITLE_MAX: Final = 100
VERSION_MAX: Final = 255
REMOTE_TYPES: Final = ("streamable-http", "sse")
_REMOTE_URL = re.compile(r"(https?://[^\s]+|\{[a-zA-Z_][a-zA-Z0-9_]*\}[^\s]*)")
_LABEL = re.compile(r"[a-zA-Z0-9-]+")
_NOT_NAME = re.compile(r"[^a-zA-Z0-9._-]+")


def card_name(server_name: str, host: str | None) -> str:
    """The card's reverse-DNS `name`: the server's own when it already has that form
    (`com.example/weather`), else its public host's labels reversed before it
    (mcp.example.com -> `com.example.mcp/codex`), `local` for an address or a bare name."""
    if NAME_PATTERN.fullmatch(server_name) and 3 <= len(server_name) <= NAME_MAX:
        return server_name
    namespace = "local"
    labels = (host or "").lower().rstrip(".").split(".")
    if len(labels) > 1 and not labels[-1].isdigit() and all(_LABEL.fullmatch(x) for x in labels):
        namespace = ".".join(reversed(labels))
    leaf = _NOT_NAME.sub("-", server_name).strip("-") or "server"
    return f"{namespace}/{leaf}"[:NAME_MAX]


def _clipped(text: str, limit: int) -> str:
    """`text` on one line, at most `limit` characters (an ellipsis says it was cut)."""
    line = " ".join(text.split())
    return line if len(line) <= limit else line[: limit - 1].rstrip() + "…"


def build_card(
    server_info: JsonObject,
    instructions: str | None,
    *,
    endpoint: str,
    host: str | None,
    versions: list[str],
    authorization: bool,
) -> JsonObject:
    """The card of a server whose initialize answer says `server_info`, reached at
    `endpoint` (its Streamable HTTP URL). Built from what the server already says of
    itself (name, version, description or instructions, title, websiteUrl, icons); never
    its tools, sessions or credentials."""
    name = str(server_info.get("name") or "server")
    described = server_info.get("description")
    if isinstance(described, str) and described.strip():
        description = described
    elif instructions and instructions.strip():
        description = instructions.strip().splitlines()[0]
    else:
        description = f"The MCP server {name}"
    remote: JsonObject = {
        "type": "streamable-http",
        "url": endpoint,
        "supportedProtocolVersions": versions,
    }
    if authorization:
        remote["headers"] = [
            {
                "name": "Authorization",
                "description": "A bearer token this server accepts.",
                "isRequired": True,
                "isSecret": True,
            }
        ]
    card: JsonObject = {
        "$schema": SCHEMA_URL,
        "name": card_name(name, host),
        "version": str(server_info.get("version") or "0")[:VERSION_MAX],
        "description": _clipped(description, DESCRIPTION_MAX),
    }
    title = server_info.get("title")
    if isinstance(title, str) and title.strip():
        card["title"] = _clipped(title, TITLE_MAX)
    website = server_info.get("websiteUrl")
    if isinstance(website, str) and re.fullmatch(r"https?://\S+", website):
        card["websiteUrl"] = website
    icons = _icons(server_info.get("icons"))
    if icons:
        card["icons"] = icons
    card["remotes"] = [remote]
    return card


def _icons(given: Any) -> list[JsonObject]:
    """The serverInfo icons the card's Icon shape takes, each with only its known fields."""
    if type(given) is not list:
        return []
    icons = []
    for icon in given:
        if type(icon) is not dict:
            continue
        src = icon.get("src")
        if type(src) is not str or not re.fullmatch(r"(https?://|data:)\S+", src):
            continue
        kept: JsonObject = {"src": src}
        if type(icon.get("mimeType")) is str:
            kept["mimeType"] = icon["mimeType"]
        sizes = icon.get("sizes")
        if type(sizes) is list and all(type(size) is str for size in sizes):
            kept["sizes"] = sizes
        if icon.get("theme") in ("light", "dark"):
            kept["theme"] = icon["theme"]
        icons.append(kept)
    return icons


class InvalidCard(ValueError):
    """A document that is not a server card; the message says what is wrong."""


@dataclass(frozen=True)
class Remote:
    type: str
    url: str
    supported_protocol_versions: tuple[str, ...] = ()


@dataclass(frozen=True)
class ServerCard:
    """A server card as a client reads it: advisory, checked against the live connection
    before anything relies on it (the extension's "Consistency with Runtime Behavior")."""

    name: str
    version: str
    description: str
    title: str | None
    remotes: tuple[Remote, ...]
    #: The whole document as received (fields this type does not name included).
    document: JsonObject


def read_card(document: Any) -> ServerCard:
    """Check `document` (parsed JSON) against the card's required shape and bounds.
    Raises InvalidCard naming the first problem."""
    if type(document) is not dict:
        raise InvalidCard(f"a server card is a JSON object, not {_kind(document)}")
    schema = document.get("$schema")
    if schema != SCHEMA_URL:
        raise InvalidCard(f"$schema is {_shown(schema)}, not {SCHEMA_URL}")
    name = _string(document, "name", NAME_MAX, minimum=3)
    if not NAME_PATTERN.fullmatch(name):
        raise InvalidCard(f"name {name!r} is not in reverse-DNS form (namespace/name)")
    version = _string(document, "version", VERSION_MAX, minimum=0)
    description = _string(document, "description", DESCRIPTION_MAX, minimum=1)
    title = _string(document, "title", TITLE_MAX, minimum=1) if "title" in document else None
    remotes = document.get("remotes", [])
    if type(remotes) is not list:
        raise InvalidCard(f"remotes is {_kind(remotes)}, not a list")
    return ServerCard(
        name=name,
        version=version,
        description=description,
        title=title,
        remotes=tuple(_remote(index, remote) for index, remote in enumerate(remotes)),
        document=document,
    )


def _remote(index: int, remote: Any) -> Remote:
    where = f"remotes[{index}]"
    if type(remote) is not dict:
        raise InvalidCard(f"{where} is {_kind(remote)}, not an object")
    kind = remote.get("type")
    if kind not in REMOTE_TYPES:
        raise InvalidCard(f"{where}.type is {_shown(kind)}, not one of {', '.join(REMOTE_TYPES)}")
    url = remote.get("url")
    if type(url) is not str or not _REMOTE_URL.fullmatch(url):
        raise InvalidCard(f"{where}.url is {_shown(url)}, not an http(s) URL or a template")
    versions = remote.get("supportedProtocolVersions", [])
    if type(versions) is not list or not all(type(v) is str for v in versions):
        raise InvalidCard(f"{where}.supportedProtocolVersions is not a list of strings")
    return Remote(kind, url, tuple(versions))


def _string(document: JsonObject, key: str, maximum: int, *, minimum: int) -> str:
    if key not in document:
        raise InvalidCard(f"{key} is missing")
    value = document[key]
    if type(value) is not str:
        raise InvalidCard(f"{key} is {_kind(value)}, not a string")
    if not minimum <= len(value) <= maximum:
        raise InvalidCard(f"{key} is {len(value)} characters long; {minimum} to {maximum} fit")
    return value


def _kind(value: Any) -> str:
    if value is None:
        return "null"
    return {dict: "an object", list: "a list", str: "a string", bool: "a boolean"}.get(
        type(value), "a number"
    )


def _shown(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."
