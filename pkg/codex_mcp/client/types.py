"""Typed results. Each keeps the server's JSON in `raw`, so nothing a server sends is lost."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace
from typing import Any, TypeVar

from codex_mcp.core.jsonrpc import JsonObject

T = TypeVar("T")
U = TypeVar("U")


def _dict(value: Any) -> JsonObject:
    return value if isinstance(value, dict) else {}


def _opt_dict(value: Any) -> JsonObject | None:
    return value if isinstance(value, dict) else None


def _str(value: Any) -> str:
    return value if isinstance(value, str) else ""


def _opt_str(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def _opt_int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _objects(value: Any) -> list[JsonObject]:
    """The objects of a list (an item that is not one is dropped); [] for a non-list."""
    return [item for item in value if isinstance(item, dict)] if isinstance(value, list) else []


class _Listed:
    """An item of a `*/list` result, whose `to_json` is the server's definition as it sent it."""

    __slots__ = ()
    raw: JsonObject

    def to_json(self) -> JsonObject:
        return dict(self.raw)


@dataclass(frozen=True, slots=True)
class InitializeResult:
    protocol_version: str
    capabilities: JsonObject
    server_info: JsonObject
    instructions: str | None
    raw: JsonObject

    @classmethod
    def from_json(cls, data: JsonObject) -> InitializeResult:
        return cls(
            protocol_version=str(data.get("protocolVersion", "")),
            capabilities=_dict(data.get("capabilities")),
            server_info=_dict(data.get("serverInfo")),
            instructions=_opt_str(data.get("instructions")),
            raw=data,
        )


@dataclass(frozen=True, slots=True)
class Tool:
    name: str
    description: str | None
    input_schema: JsonObject
    output_schema: JsonObject | None = None
    title: str | None = None
    annotations: JsonObject | None = None
    raw: JsonObject = field(default_factory=dict)
    #: Set by list_tools(qualify=True): `mcp__<server>__<tool>`, see naming.qualify_tool_name.
    qualified_name: str | None = None
    server_name: str | None = None

    @classmethod
    def from_json(cls, data: JsonObject) -> Tool:
        return cls(
            name=str(data.get("name", "")),
            description=_opt_str(data.get("description")),
            input_schema=_dict(data.get("inputSchema")),
            output_schema=_opt_dict(data.get("outputSchema")),
            title=_opt_str(data.get("title")),
            annotations=_opt_dict(data.get("annotations")),
            raw=data,
        )

    def qualified(self, server_name: str, qualified_name: str) -> Tool:
        return replace(self, qualified_name=qualified_name, server_name=server_name)

    def to_json(self) -> JsonObject:
        """The server's tool definition, plus `qualified_name`/`server_name` when qualified."""
        out = dict(self.raw)
        if self.qualified_name is not None:
            out["qualified_name"] = self.qualified_name
            out["server_name"] = self.server_name
        return out


@dataclass(frozen=True, slots=True)
class CallToolResult:
    content: list[JsonObject]
    structured_content: Any
    is_error: bool
    raw: JsonObject

    @classmethod
    def from_json(cls, data: JsonObject) -> CallToolResult:
        content = data.get("content")
        # Pre-2024-11-05 servers answered tools/call with {"toolResult": ...}.
        if content is None and "toolResult" in data:
            content = [{"type": "text", "text": str(data["toolResult"])}]
        return cls(
            content=_objects(content),
            structured_content=data.get("structuredContent"),
            is_error=data.get("isError") is True,
            raw=data,
        )

    @property
    def text(self) -> str:
        """The text blocks of the content, joined by newlines."""
        return "\n".join(
            str(block.get("text", "")) for block in self.content if block.get("type") == "text"
        )


class Page(list[T]):
    """What every list method returns: a list of its typed items, with `next_cursor` (the
    cursor of the next page; None on the last page, and after every page was followed) and
    `raw` (the server's result for the last page asked)."""

    __slots__ = ("next_cursor", "raw")

    def __init__(
        self, items: Iterable[T] = (), next_cursor: str | None = None, raw: JsonObject | None = None
    ) -> None:
        super().__init__(items)
        self.next_cursor = next_cursor
        self.raw: JsonObject = raw if raw is not None else {}

    @property
    def items(self) -> list[T]:
        """The page itself (the name pages of plain dicts had)."""
        return self

    def map(self, parse: Callable[[T], U]) -> Page[U]:
        """The same page with each item parsed (the cursor and raw result kept)."""
        return Page([parse(item) for item in self], self.next_cursor, self.raw)

    def __repr__(self) -> str:
        return f"Page({list.__repr__(self)}, next_cursor={self.next_cursor!r})"


@dataclass(frozen=True, slots=True)
class Resource(_Listed):
    """One item of resources/list."""

    uri: str
    name: str
    title: str | None = None
    description: str | None = None
    mime_type: str | None = None
    size: int | None = None
    annotations: JsonObject | None = None
    raw: JsonObject = field(default_factory=dict)

    @classmethod
    def from_json(cls, data: JsonObject) -> Resource:
        return cls(
            uri=_str(data.get("uri")),
            name=_str(data.get("name")),
            title=_opt_str(data.get("title")),
            description=_opt_str(data.get("description")),
            mime_type=_opt_str(data.get("mimeType")),
            size=_opt_int(data.get("size")),
            annotations=_opt_dict(data.get("annotations")),
            raw=data,
        )


@dataclass(frozen=True, slots=True)
class ResourceTemplate(_Listed):
    """One item of resources/templates/list."""

    uri_template: str
    name: str
    title: str | None = None
    description: str | None = None
    mime_type: str | None = None
    annotations: JsonObject | None = None
    raw: JsonObject = field(default_factory=dict)

    @classmethod
    def from_json(cls, data: JsonObject) -> ResourceTemplate:
        return cls(
            uri_template=_str(data.get("uriTemplate")),
            name=_str(data.get("name")),
            title=_opt_str(data.get("title")),
            description=_opt_str(data.get("description")),
            mime_type=_opt_str(data.get("mimeType")),
            annotations=_opt_dict(data.get("annotations")),
            raw=data,
        )


@dataclass(frozen=True, slots=True)
class PromptArgument:
    name: str
    description: str | None = None
    required: bool = False
    title: str | None = None

    @classmethod
    def from_json(cls, data: JsonObject) -> PromptArgument:
        return cls(
            name=_str(data.get("name")),
            description=_opt_str(data.get("description")),
            required=data.get("required") is True,
            title=_opt_str(data.get("title")),
        )


@dataclass(frozen=True, slots=True)
class Prompt(_Listed):
    """One item of prompts/list."""

    name: str
    title: str | None = None
    description: str | None = None
    arguments: list[PromptArgument] = field(default_factory=list)
    raw: JsonObject = field(default_factory=dict)

    @classmethod
    def from_json(cls, data: JsonObject) -> Prompt:
        return cls(
            name=_str(data.get("name")),
            title=_opt_str(data.get("title")),
            description=_opt_str(data.get("description")),
            arguments=[PromptArgument.from_json(a) for a in _objects(data.get("arguments"))],
            raw=data,
        )


@dataclass(frozen=True, slots=True)
class ReadResourceResult:
    contents: list[JsonObject]
    raw: JsonObject

    @classmethod
    def from_json(cls, data: JsonObject) -> ReadResourceResult:
        return cls(_objects(data.get("contents")), data)


@dataclass(frozen=True, slots=True)
class GetPromptResult:
    description: str | None
    messages: list[JsonObject]
    raw: JsonObject

    @classmethod
    def from_json(cls, data: JsonObject) -> GetPromptResult:
        return cls(_opt_str(data.get("description")), _objects(data.get("messages")), data)


@dataclass(frozen=True, slots=True)
class Completion:
    values: list[str]
    total: int | None
    has_more: bool
    raw: JsonObject

    @classmethod
    def from_json(cls, data: JsonObject) -> Completion:
        completion = _dict(data.get("completion"))
        values = completion.get("values")
        total = completion.get("total")
        return cls(
            [str(v) for v in values] if isinstance(values, list) else [],
            total if isinstance(total, int) else None,
            completion.get("hasMore") is True,
            data,
        )
