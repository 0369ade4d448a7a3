"""The 2026-07-28 HTTP routing headers, checked against the body they mirror; pure functions
(specs/mcp-2026-07-28.md, 1.12; specs/http.md, "2026-07-28 requests on the same endpoint")."""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any, Final

from .errors import McpError
from .request_meta import HEADER_MISMATCH, PROTOCOL_VERSION_KEY

PROTOCOL_VERSION_HEADER: Final = "mcp-protocol-version"
METHOD_HEADER: Final = "mcp-method"
NAME_HEADER: Final = "mcp-name"
PARAM_HEADER_PREFIX: Final = "mcp-param-"
X_MCP_HEADER: Final = "x-mcp-header"

# The body field `Mcp-Name` mirrors, per method: SEP-2243's three, and the tasks
# extension's `taskId` (ext-tasks, "Streamable HTTP: Routing Headers").
NAME_SOURCES: Final = {
    "tools/call": "name",
    "prompts/get": "name",
    "resources/read": "uri",
    "tasks/get": "taskId",
    "tasks/update": "taskId",
    "tasks/cancel": "taskId",
}

_SENTINEL: Final = re.compile(r"=\?base64\?(.*)\?=", re.DOTALL)
_HEADER_SAFE: Final = re.compile(r"[\x20-\x7e\t]*")
_TOKEN: Final = re.compile(r"[!#$%&'*+\-.^_`|~0-9A-Za-z]+")
_SAFE_INTEGER: Final = 2**53 - 1
_PRIMITIVE_TYPES: Final = frozenset({"string", "integer", "boolean"})


class HeaderMismatch(McpError):
    """-32020: the headers are missing, malformed or disagree with the body (HTTP 400)."""

    http_status: int = 400

    def __init__(self, detail: str) -> None:
        super().__init__(HEADER_MISMATCH, f"Header mismatch: {detail}")


def encode_header_value(value: str) -> str:
    """A value as a client sends it: plain when header-safe, else the Base64 sentinel."""
    if (
        value == value.strip(" \t")
        and _HEADER_SAFE.fullmatch(value)
        and not _SENTINEL.fullmatch(value)
    ):
        return value
    return f"=?base64?{base64.b64encode(value.encode()).decode('ascii')}?="


def decode_header_value(raw: str, header: str) -> str:
    """A received value, surrounding whitespace removed and the Base64 sentinel decoded.

    Strict: invalid characters, bad Base64 (padding included) or bad UTF-8 are a
    mismatch. A value lacking the sentinel's prefix or suffix is taken literally.
    """
    value = raw.strip(" \t")
    if not _HEADER_SAFE.fullmatch(value):
        raise HeaderMismatch(f"{header} header contains invalid characters")
    found = _SENTINEL.fullmatch(value)
    if found is None:
        return value
    try:
        return base64.b64decode(found.group(1), validate=True).decode("utf-8")
    except (binascii.Error, ValueError):
        raise HeaderMismatch(f"{header} header is not valid Base64") from None


def check_standard_headers(headers: Mapping[str, str], message: Mapping[str, Any]) -> None:
    """Raise HeaderMismatch unless the standard headers agree with the request body.

    `headers` must look names up case-insensitively (aiohttp's `request.headers`), or be
    keyed by lowercase names. Run before the version is judged, so a client that
    disagrees with itself is told so rather than told its version is unsupported. A
    body without a protocol version is left to the `_meta` check (-32602).
    """
    _refuse_repeats(headers)
    params = message.get("params")
    params = params if isinstance(params, dict) else {}
    meta = params.get("_meta")
    body_version = meta.get(PROTOCOL_VERSION_KEY) if isinstance(meta, dict) else None
    if body_version is not None:
        _expect(headers, PROTOCOL_VERSION_HEADER, "MCP-Protocol-Version", body_version)
    method = message.get("method")
    _expect(headers, METHOD_HEADER, "Mcp-Method", method)
    source = NAME_SOURCES.get(method) if isinstance(method, str) else None
    if source is not None and params.get(source) is not None:
        _expect(headers, NAME_HEADER, "Mcp-Name", params[source], decode=True)


_STANDARD: Final = frozenset({PROTOCOL_VERSION_HEADER, METHOD_HEADER, NAME_HEADER})


def _refuse_repeats(headers: Mapping[str, str]) -> None:
    """A routing header given twice is refused: a proxy would route by one value and we
    would check another. A multi-valued mapping (aiohttp's) lists a repeated name once per
    value in its items; a plain dict cannot repeat one."""
    seen: set[str] = set()
    for name, _ in headers.items():
        lower = name.lower()
        if lower in _STANDARD or lower.startswith(PARAM_HEADER_PREFIX):
            if lower in seen:
                raise HeaderMismatch(f"the {name} header is given more than once")
            seen.add(lower)


def _expect(
    headers: Mapping[str, str], name: str, label: str, body_value: Any, *, decode: bool = False
) -> None:
    raw = headers.get(name)
    if raw is None:
        raise HeaderMismatch(f"required {label} header is missing")
    value = decode_header_value(raw, label) if decode else raw.strip(" \t")
    if not decode and not _HEADER_SAFE.fullmatch(value):
        raise HeaderMismatch(f"{label} header contains invalid characters")
    if value != body_value:
        raise HeaderMismatch(
            f"{label} header value {value!r} does not match body value {body_value!r}"
        )


@dataclass(frozen=True, slots=True)
class ParamHeader:
    """One `x-mcp-header` annotation: where its value sits in the arguments, and its type."""

    path: tuple[str, ...]
    name: str
    type: str


def param_headers(input_schema: object) -> tuple[ParamHeader, ...]:
    """The `x-mcp-header` annotations of a tool's input schema.

    Raises ValueError naming the problem when an annotation breaks the rules
    (server/tools.mdx, "x-mcp-header"): empty or not a token, duplicated ignoring
    case, on a non-primitive (or `number`) property, or not reachable from the root
    through `properties` alone. A client must drop such a tool; a server should refuse
    to register it.
    """
    headers: list[ParamHeader] = []
    seen: set[str] = set()
    for found in _annotations(input_schema, ()):
        name = found.name
        if found.path is None:
            raise ValueError(f"x-mcp-header {name!r} is not on a property reached via `properties`")
        if not isinstance(name, str) or not _TOKEN.fullmatch(name):
            raise ValueError(f"x-mcp-header {name!r} is not an HTTP header token")
        if name.lower() in seen:
            raise ValueError(f"x-mcp-header {name!r} is used twice")
        seen.add(name.lower())
        if found.type not in _PRIMITIVE_TYPES:
            raise ValueError(
                f"x-mcp-header {name!r} is on a {found.type!r} property; "
                "only string, integer and boolean are allowed"
            )
        headers.append(ParamHeader(found.path, name, found.type))
    return tuple(headers)


@dataclass(frozen=True, slots=True)
class _Found:
    path: tuple[str, ...] | None
    name: Any
    type: Any


def _annotations(schema: object, path: tuple[str, ...] | None) -> Iterator[_Found]:
    if not isinstance(schema, dict):
        return
    if X_MCP_HEADER in schema:
        yield _Found(path if path else None, schema[X_MCP_HEADER], schema.get("type"))
    for keyword, value in schema.items():
        if keyword == "properties" and isinstance(value, dict):
            for name, sub in value.items():
                yield from _annotations(sub, (*path, name) if path is not None else None)
        elif isinstance(value, dict) and keyword not in ("const", "default", "enum", "examples"):
            yield from _annotations(value, None)
        elif isinstance(value, list) and keyword not in ("const", "default", "enum", "examples"):
            for item in value:
                yield from _annotations(item, None)


def check_param_headers(
    headers: Mapping[str, str], annotated: tuple[ParamHeader, ...], arguments: object
) -> None:
    """Raise HeaderMismatch unless every annotated argument present in the body has its
    `Mcp-Param-{Name}` header, with the same value (integers compared as numbers)."""
    for param in annotated:
        value = value_at(arguments, param.path)
        if value is None:
            continue  # absent or null: the client omits the header
        label = f"Mcp-Param-{param.name}"
        raw = headers.get(PARAM_HEADER_PREFIX + param.name.lower())
        if raw is None:
            raise HeaderMismatch(f"required {label} header is missing")
        if not _same(decode_header_value(raw, label), value):
            raise HeaderMismatch(f"{label} header does not match the argument it mirrors")


def value_at(arguments: object, path: tuple[str, ...]) -> Any:
    """The value at `path` in nested objects, or None where the path leads nowhere."""
    value = arguments
    for key in path:
        if not isinstance(value, dict):
            return None
        value = value.get(key)
    return value


def _same(header: str, value: Any) -> bool:
    if isinstance(value, bool):
        return header == ("true" if value else "false")
    if isinstance(value, int) or (isinstance(value, float) and value.is_integer()):
        try:
            number = float(header) if "." in header else int(header)
        except ValueError:
            return False
        return abs(int(value)) <= _SAFE_INTEGER and number == int(value)
    return isinstance(value, str) and header == value
