"""What can go wrong talking to an MCP server, and which of it is worth retrying
(specs/client.md, "Retries")."""

from __future__ import annotations

from typing import Any

from codex_mcp.core.errors import CodexMcpError

#: The environment variable codex-mcp-client sends as `Authorization: Bearer ...` (cli.py),
#: named by the errors that ask for a static token (oauth/errors.py).
TOKEN_ENV = "CODEX_MCP_CLIENT_TOKEN"


#: The family root (core/errors.py) under the client's public name: every error the client
#: raises derives from it, `McpError` (the server answered with a JSON-RPC error) included.
McpClientError = CodexMcpError


class TransportError(McpClientError):
    """The message could not be delivered or its answer could not be read. `fate_unknown`:
    the server may have received (and acted on) the request anyway."""

    def __init__(self, message: str, *, retryable: bool = True, fate_unknown: bool = False) -> None:
        super().__init__(message)
        self.retryable = retryable
        self.fate_unknown = fate_unknown


class ConnectionClosed(TransportError):
    """The connection to the server is gone (process exited, stream closed, client closed)."""

    def __init__(self, message: str) -> None:
        super().__init__(message, retryable=False)


class SessionExpired(TransportError):
    """The HTTP server no longer knows our session (404); the session re-initializes once."""

    def __init__(self, message: str = "the server no longer knows this session (HTTP 404)") -> None:
        super().__init__(message, retryable=False)


class RequestTimeout(McpClientError, TimeoutError):
    """No answer within the timeout; the server was sent notifications/cancelled."""

    def __init__(self, method: str, timeout: float) -> None:
        super().__init__(f"{method}: no response within {timeout:g} s (request cancelled)")
        self.method = method
        self.timeout = timeout


class ApprovalDenied(McpClientError):
    """The approval callback refused the tool call; the server was never asked."""

    def __init__(self, tool: str, reason: Any = None) -> None:
        detail = f": {reason}" if reason not in (None, "") else ""
        super().__init__(f"call to tool {tool!r} denied by approval callback{detail}")
        self.tool = tool
        self.reason = reason


def is_retryable(exc: BaseException, *, idempotent: bool = True) -> bool:
    """Worth another attempt. With `idempotent=False` (a tool call), a failure that may
    have happened after the server took the request is not."""
    if not isinstance(exc, CodexMcpError) or not exc.retryable:
        return False
    return idempotent or not exc.fate_unknown


class SpawnError(McpClientError):
    """The server process could not be started (not retryable)."""


class UsageError(McpClientError):
    pass
