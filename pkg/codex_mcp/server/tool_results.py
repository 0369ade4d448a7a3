"""Shaping tools/call results: structured output and errors as results."""

from __future__ import annotations

from functools import lru_cache
from typing import Any

import orjson

from ..core.jsonrpc import JsonObject


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


class OutputSchemaError(ValueError):
    pass


@lru_cache(maxsize=1024)
def _validator_for(schema_json: bytes) -> Any:
    import jsonschema  # imported on first use: most servers never need it

    schema = orjson.loads(schema_json)
    cls = jsonschema.validators.validator_for(schema, default=jsonschema.Draft202012Validator)
    return cls(schema)


def schema_validator(schema: JsonObject) -> Any:
    """A cached jsonschema validator (2020-12 unless the schema names another draft)."""
    return _validator_for(orjson.dumps(schema, option=orjson.OPT_SORT_KEYS))


def check_output(structured: Any, output_schema: JsonObject) -> None:
    errors = sorted(schema_validator(output_schema).iter_errors(structured), key=str)
    if errors:
        first = errors[0]
        where = "/".join(str(p) for p in first.absolute_path) or "(root)"
        raise OutputSchemaError(
            f"structuredContent does not match outputSchema at {where}: {first.message}"
        )


def describe_validation_errors(errors: list[Any]) -> str:
    """One readable line per jsonschema error, naming the field."""
    lines = []
    for error in errors:
        where = ".".join(str(p) for p in error.absolute_path) or "(arguments)"
        lines.append(f"{where}: {error.message}")
    return "; ".join(lines)
