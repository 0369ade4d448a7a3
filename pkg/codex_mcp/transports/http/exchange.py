"""Shared pieces of the HTTP handlers: classifying messages, finding the session,
reading the body."""

from __future__ import annotations

import logging

from aiohttp import web

from ...core.jsonrpc import JsonObject, is_valid_id
from ...core.versions import is_supported
from .errors import (
    SESSION_NOT_FOUND,
    TRANSPORT_ERROR,
    BodyTimeout,
    Busy,
    busy_response,
    error_response,
)
from .manager import SessionManager
from .security import credential_of
from .sessions import HttpSession

log = logging.getLogger("codex_mcp.http")

SESSION_HEADER = "Mcp-Session-Id"
VERSION_HEADER = "MCP-Protocol-Version"


def is_request(message: JsonObject) -> bool:
    return isinstance(message.get("method"), str) and "id" in message and is_valid_id(message["id"])


def is_notification(message: JsonObject) -> bool:
    return isinstance(message.get("method"), str) and "id" not in message


def accepted(request: web.Request) -> tuple[bool, bool]:
    """(does the Accept header admit JSON, does it admit SSE), from one pass over it. A
    missing header admits everything; `*/*` both; `application/*` JSON; `text/*` SSE."""
    header = request.headers.get("Accept")
    if not header:
        return True, True
    json = sse = False
    for part in header.split(","):
        value = part.split(";")[0].strip().lower()
        if value == "*/*":
            return True, True
        if value in _JSON_TYPES:
            json = True
        elif value in _SSE_TYPES:
            sse = True
    return json, sse


_JSON_TYPES = frozenset({"application/json", "application/*"})
_SSE_TYPES = frozenset({"text/event-stream", "text/*"})


def accepts_sse(request: web.Request) -> bool:
    """Does the Accept header admit `text/event-stream`?"""
    return accepted(request)[1]


def unsupported_version(request: web.Request) -> web.Response | None:
    """400 when the request names a protocol version we do not speak (none is fine)."""
    version = request.headers.get(VERSION_HEADER)
    if version is not None and not is_supported(version):
        return error_response(400, f"Bad Request: unsupported {VERSION_HEADER}: {version!r}")
    return None


def find_session(
    manager: SessionManager,
    request: web.Request,
    session_id: str | None,
    named: str = f"the {SESSION_HEADER} header",
) -> HttpSession | web.Response:
    """The session a request names, or the error to answer: 400 when it names none,
    404 when it is unknown, ended, or another credential's."""
    if not session_id:
        return error_response(400, f"Bad Request: missing {named} (initialize first)")
    session = manager.find(session_id, credential_of(request))
    if session is None:
        return error_response(404, "Session not found: initialize a new session", SESSION_NOT_FOUND)
    return session


async def locate_session(
    manager: SessionManager,
    request: web.Request,
    session_id: str | None,
    named: str = f"the {SESSION_HEADER} header",
) -> HttpSession | web.Response:
    """`find_session`, then (sessions shared with other replicas) the shared store: a
    session another replica created is served here too. Raises StoreUnavailable."""
    found = find_session(manager, request, session_id, named)
    if type(found) is not web.Response or not manager.shared or found.status != 404:
        return found
    assert session_id is not None
    try:
        loaded = await manager.load(session_id, credential_of(request))
    except Busy as exc:
        return busy_response(exc.status, str(exc))
    return loaded if loaded is not None else found


async def read_body(request: web.Request, max_bytes: int) -> bytes | web.Response:
    """The request body, or the error to answer: 413 too large, 400 unreadable (a
    Content-Encoding it does not match, broken chunking), 408 stalled."""
    try:
        return await request.read()
    except web.HTTPRequestEntityTooLarge:
        return error_response(413, f"Request body over {max_bytes} bytes")
    except web.RequestPayloadError as exc:
        log.debug("unreadable request body: %s", exc)
        return error_response(
            400, "Bad Request: the body could not be read (does it match its Content-Encoding?)"
        )
    except BodyTimeout as exc:
        response = error_response(408, str(exc), TRANSPORT_ERROR)
        response.force_close()
        return response
