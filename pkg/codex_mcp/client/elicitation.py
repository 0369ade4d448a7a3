"""Elicitation defaults (SEP-1034): a form field the user left out takes the default its
schema gives, so a handler that accepts with only what the user changed still answers
every field the server offered a default for."""

from __future__ import annotations

import inspect
from typing import Any

from codex_mcp.core.jsonrpc import JsonObject

from .session import RequestHandler, takes_context


def with_defaults(handler: RequestHandler) -> RequestHandler:
    """`handler`, its accepted answers completed with the requested schema's defaults."""

    async def answer(params: JsonObject, ctx: Any = None) -> JsonObject:
        result = handler(params, ctx) if takes_context(handler) else handler(params)
        if inspect.isawaitable(result):
            result = await result
        return apply_defaults(params, result)

    return answer


def apply_defaults(params: JsonObject, result: JsonObject) -> JsonObject:
    if not isinstance(result, dict) or result.get("action") != "accept":
        return result
    schema = params.get("requestedSchema")
    properties = schema.get("properties") if isinstance(schema, dict) else None
    if not isinstance(properties, dict):
        return result
    content = result.get("content")
    filled = dict(content) if isinstance(content, dict) else {}
    for name, field in properties.items():
        if isinstance(field, dict) and "default" in field and name not in filled:
            filled[name] = field["default"]
    return {**result, "content": filled}
