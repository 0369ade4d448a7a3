"""Content a tool, resource or prompt can return, and how Python values map onto it."""

from __future__ import annotations

import base64
from dataclasses import dataclass, field
from typing import Any

from ..core.jsonrpc import JsonObject


def _b64(data: bytes | str) -> str:
    return data if isinstance(data, str) else base64.b64encode(data).decode("ascii")


class Content:
    """A content block; `to_json()` gives its MCP wire form."""

    def to_json(self) -> JsonObject:
        raise NotImplementedError


@dataclass(slots=True)
class Text(Content):
    text: str
    annotations: JsonObject | None = None
    meta: JsonObject | None = None

    def to_json(self) -> JsonObject:
        return _with_extras({"type": "text", "text": self.text}, self.annotations, self.meta)


@dataclass(slots=True)
class Image(Content):
    """Image bytes (or already-base64 text) with their MIME type."""

    data: bytes | str
    mime_type: str = "image/png"
    annotations: JsonObject | None = None
    meta: JsonObject | None = None

    def to_json(self) -> JsonObject:
        block = {"type": "image", "data": _b64(self.data), "mimeType": self.mime_type}
        return _with_extras(block, self.annotations, self.meta)


@dataclass(slots=True)
class Audio(Content):
    data: bytes | str
    mime_type: str = "audio/wav"
    annotations: JsonObject | None = None
    meta: JsonObject | None = None

    def to_json(self) -> JsonObject:
        block = {"type": "audio", "data": _b64(self.data), "mimeType": self.mime_type}
        return _with_extras(block, self.annotations, self.meta)


@dataclass(slots=True)
class ResourceContents:
    """The contents of one resource: text, or bytes sent as a base64 blob."""

    uri: str
    text: str | None = None
    blob: bytes | str | None = None
    mime_type: str | None = None
    meta: JsonObject | None = None

    def to_json(self) -> JsonObject:
        out: JsonObject = {"uri": self.uri}
        if self.mime_type:
            out["mimeType"] = self.mime_type
        if self.blob is not None:
            out["blob"] = _b64(self.blob)
        else:
            out["text"] = self.text or ""
        if self.meta:
            out["_meta"] = self.meta
        return out


@dataclass(slots=True)
class EmbeddedResource(Content):
    resource: ResourceContents
    annotations: JsonObject | None = None
    meta: JsonObject | None = None

    def to_json(self) -> JsonObject:
        block = {"type": "resource", "resource": self.resource.to_json()}
        return _with_extras(block, self.annotations, self.meta)


@dataclass(slots=True)
class ResourceLink(Content):
    uri: str
    name: str
    title: str | None = None
    description: str | None = None
    mime_type: str | None = None
    size: int | None = None
    annotations: JsonObject | None = None
    meta: JsonObject | None = None

    def to_json(self) -> JsonObject:
        block: JsonObject = {"type": "resource_link", "uri": self.uri, "name": self.name}
        for key, value in (
            ("title", self.title),
            ("description", self.description),
            ("mimeType", self.mime_type),
            ("size", self.size),
        ):
            if value is not None:
                block[key] = value
        return _with_extras(block, self.annotations, self.meta)


@dataclass(slots=True)
class ToolResult:
    """Full control over a tools/call result."""

    content: list[Any] = field(default_factory=list)
    structured: Any = None
    is_error: bool = False
    meta: JsonObject | None = None


def _with_extras(
    block: JsonObject, annotations: JsonObject | None, meta: JsonObject | None
) -> JsonObject:
    if annotations:
        block["annotations"] = annotations
    if meta:
        block["_meta"] = meta
    return block


def to_blocks(value: Any) -> list[JsonObject]:
    """str, a Content, or a list of them as content blocks. Anything else is not content."""
    if isinstance(value, str):
        return [{"type": "text", "text": value}]
    if isinstance(value, Content):
        return [value.to_json()]
    if isinstance(value, list | tuple):
        blocks: list[JsonObject] = []
        for item in value:
            if isinstance(item, dict) and "type" in item:
                blocks.append(item)  # already wire-shaped
            else:
                blocks.extend(to_blocks(item))
        return blocks
    raise TypeError(f"cannot turn {type(value).__name__} into content")


def is_content_value(value: Any) -> bool:
    if isinstance(value, Content | str):
        return True
    if isinstance(value, list | tuple):
        return all(isinstance(v, Content | str) for v in value)
    return False
