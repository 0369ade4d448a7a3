"""Every error the HTTP transport answers itself: one envelope, named codes, and the exceptions
its parts raise to get one answered (specs/http.md, "Errors")."""

from __future__ import annotations

import json
from typing import Any, Final

from aiohttp import web

from ...core.errors import CodexMcpError
from ...core.jsonrpc import INVALID_REQUEST

#: The transport refused the request for a reason of its own: over a cap (sessions, calls,
#: connections), shutting down, or a request too slow to arrive. Try again later.
TRANSPORT_ERROR: Final = -32000
#: No such session, or not yours: initialize a new one.
SESSION_NOT_FOUND: Final = -32001

#: Seconds a client is asked to wait before retrying a refused request.
RETRY_AFTER_SECONDS: Final = 1
#: Why a refusal was answered, one of observe/refusals.py's REASONS (its metric's label);
#: a refusal without one is named by its status.
REFUSAL_REASON: Final = web.ResponseKey("codex_mcp_refusal_reason", str)


def error_body(message: str, code: int = INVALID_REQUEST, request_id: Any = None) -> bytes:
    # json, not orjson: a message may quote a header that is not valid UTF-8.
    envelope = {"jsonrpc": "2.0", "id": request_id, "error": {"code": code, "message": message}}
    return json.dumps(envelope).encode()


def error_response(
    status: int,
    message: str,
    code: int = INVALID_REQUEST,
    request_id: Any = None,
    headers: dict[str, str] | None = None,
) -> web.Response:
    """An HTTP error whose body is a JSON-RPC error response."""
    return web.Response(
        status=status,
        body=error_body(message, code, request_id),
        content_type="application/json",
        headers=headers,
    )


def refusal(response: web.Response, reason: str) -> web.Response:
    """`response`, named for the refusals metric."""
    response[REFUSAL_REASON] = reason
    return response


def busy_response(
    status: int, message: str, request_id: Any = None, headers: dict[str, str] | None = None
) -> web.Response:
    """A refusal for lack of capacity (429 or 503) that tells the client when to retry."""
    retry = {"Retry-After": str(RETRY_AFTER_SECONDS)}
    return error_response(
        status, message, TRANSPORT_ERROR, request_id, {**(headers or {}), **retry}
    )


class Busy(CodexMcpError):
    """No room now: `status` is 429 when the session's own calls fill its share, 503 when
    the server is full (sessions, calls) or shutting down. The message says which cap."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


class TokenRefused(CodexMcpError):
    """The token cannot be used: 401 (or 503 when the issuer cannot be reached)."""

    def __init__(self, message: str, status: int = 401) -> None:
        super().__init__(message)
        self.status = status


class BodyTimeout(CodexMcpError, TimeoutError):
    """A request body stalled; raised from the handler's read of it."""


class IssuerUnreachable(CodexMcpError):
    """The issuer's metadata or keys could not be fetched: no token can be checked now."""


class UnknownKey(CodexMcpError):
    """The token names a key the issuer does not publish."""


class StoreUnavailable(CodexMcpError):
    """The shared store could not be reached; the request is refused with 503."""
