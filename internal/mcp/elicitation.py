"""Checking what a client answers to `elicitation/create` against the schema asked with, in
both eras (specs/isolation.md, "Elicitation answers")."""

from __future__ import annotations

from typing import Any

from .errors import McpError
from .json_schema import describe_validation_errors, schema_validator
from .jsonrpc import INVALID_PARAMS, JsonObject


class ElicitationMismatch(McpError):
    """The client accepted an elicitation with content the requestedSchema does not allow.
    A tool that does not catch it fails with this message (an error result)."""

    def __init__(self, detail: str) -> None:
        super().__init__(
            INVALID_PARAMS,
            f"The client's answer does not match the requested schema: {detail}",
            {"reason": "elicitation_mismatch"},
        )


def checked_elicitation(answer: JsonObject, requested_schema: JsonObject) -> JsonObject:
    """`answer` (an ElicitResult) when it declines, cancels, or accepts content that
    matches `requested_schema`; ElicitationMismatch otherwise."""
    if answer.get("action") != "accept":
        return answer
    content: Any = answer.get("content", {})
    errors = sorted(schema_validator(requested_schema).iter_errors(content), key=str)
    if errors:
        raise ElicitationMismatch(describe_validation_errors(errors, "(content)"))
    return answer


__all__ = ["ElicitationMismatch", "checked_elicitation"]
