"""Typed results. Each keeps the server's JSON in `raw`, so nothing a server sends is lost."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any, Generic, TypeVar

from codex_mcp.core.jsonrpc import JsonObject

T = TypeVar("T")


def _dict(value: Any) -> JsonObject:
    return value if isinstance(value, dict) else {}


def _opt_str(value: Any) -> str | None:
    return value if isinstance(value, str) else None


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
        output = data.get("outputSchema")
        annotations = data.get("annotations")
        return cls(
            name=str(data.get("name", "")),
            description=_opt_str(data.get("description")),
            input_schema=_dict(data.get("inputSchema")),
            output_schema=output if isinstance(output, dict) else None,
            title=_opt_str(data.get("title")),
            annotations=annotations if isinstance(annotations, dict) else None,
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
            content=[c for c in content if isinstance(c, dict)]
            if isinstance(content, list)
            else [],
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


@dataclass(frozen=True, slots=True)
class Page(Generic[T]):
    """One page of a list method (or all pages, with `next_cursor` None)."""

    items: list[T]
    next_cursor: str | None
    raw: JsonObject


@dataclass(frozen=True, slots=True)
class ReadResourceResult:
    contents: list[JsonObject]
    raw: JsonObject

    @classmethod
    def from_json(cls, data: JsonObject) -> ReadResourceResult:
        contents = data.get("contents")
        return cls(
            [c for c in contents if isinstance(c, dict)] if isinstance(contents, list) else [], data
        )


@dataclass(frozen=True, slots=True)
class GetPromptResult:
    description: str | None
    messages: list[JsonObject]
    raw: JsonObject

    @classmethod
    def from_json(cls, data: JsonObject) -> GetPromptResult:
        messages = data.get("messages")
        return cls(
            _opt_str(data.get("description")),
            [m for m in messages if isinstance(m, dict)] if isinstance(messages, list) else [],
            data,
        )


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
