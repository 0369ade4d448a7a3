"""Shaping tools/call results: structured output and errors as results."""

from __future__ import annotations

from typing import Any

import orjson

from ..core.json_schema import describe_validation_errors, schema_validator
from ..core.jsonrpc import JsonObject
from .errors import OutputSchemaError


def text_block(text: str) -> JsonObject:
    return {"type": "text", "text": text}


def error_result(message: str) -> JsonObject:
    """A tool execution failure the model can read and act on (isError, not a JSON-RPC error)."""
    return {"content": [text_block(message)], "isError": True}


def structured_result(
    structured: JsonObject, content: list[JsonObject] | None = None
) -> JsonObject:
    """structuredContent plus its JSON as a text block, for clients that read only content."""
    if not content:
        content = [text_block(orjson.dumps(structured).decode())]
    return {"content": content, "structuredContent": structured}


__all__ = [
    "OutputSchemaError",
    "check_output",
    "describe_validation_errors",
    "error_result",
    "schema_validator",
    "structured_result",
    "text_block",
]


def check_output(structured: Any, output_schema: JsonObject) -> None:
    errors = sorted(schema_validator(output_schema).iter_errors(structured), key=str)
    if errors:
        first = errors[0]
        where = "/".join(str(p) for p in first.absolute_path) or "(root)"
        raise OutputSchemaError(
            f"structuredContent does not match outputSchema at {where}: {first.message}"
        )
