"""Shared pieces of the HTTP handlers: classifying messages and answering errors."""

from __future__ import annotations

from typing import Any

from aiohttp import web

from ...core.jsonrpc import JsonObject, is_valid_id


def jsonrpc_error(
    status: int,
    message: str,
    code: int = -32600,
    request_id: Any = None,
    headers: dict[str, str] | None = None,
) -> web.Response:
    body = {"jsonrpc": "2.0", "id": request_id, "error": {"code": code, "message": message}}
    return web.json_response(body, status=status, headers=headers)


def is_request(message: JsonObject) -> bool:
    return isinstance(message.get("method"), str) and "id" in message and is_valid_id(message["id"])


def is_notification(message: JsonObject) -> bool:
    return isinstance(message.get("method"), str) and "id" not in message


def is_client_response(message: JsonObject) -> bool:
    return (
        "method" not in message and "id" in message and ("result" in message or "error" in message)
    )


def accepts(request: web.Request, media_type: str) -> bool:
    """Does the Accept header admit `media_type`? A missing header admits everything."""
    header = request.headers.get("Accept")
    if not header:
        return True
    major = media_type.split("/")[0]
    for part in header.split(","):
        value = part.split(";")[0].strip().lower()
        if value in (media_type, "*/*", f"{major}/*"):
            return True
    return False
