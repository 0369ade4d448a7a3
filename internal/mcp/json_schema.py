"""JSON Schema validation, one cached validator per schema (what a tool's input and
output schemas and an elicitation's requestedSchema are checked with)."""

from __future__ import annotations

from functools import lru_cache
from typing import Any

import orjson

from .jsonrpc import JsonObject


@lru_cache(maxsize=1024)
def _validator_for(schema_json: bytes) -> Any:
    import jsonschema  # imported on first use: most servers never need it

    schema = orjson.loads(schema_json)
    cls = jsonschema.validators.validator_for(schema, default=jsonschema.Draft202012Validator)
    return cls(schema)


def schema_validator(schema: JsonObject) -> Any:
    """A cached jsonschema validator (2020-12 unless the schema names another draft)."""
    return _validator_for(orjson.dumps(schema, option=orjson.OPT_SORT_KEYS))


def describe_validation_errors(errors: list[Any], root: str = "(arguments)") -> str:
    """One readable line per jsonschema error, naming the field."""
    lines = []
    for error in errors:
        where = ".".join(str(p) for p in error.absolute_path) or root
        lines.append(f"{where}: {error.message}")
    return "; ".join(lines)


__all__ = ["describe_validation_errors", "schema_validator"]
