"""The root of codex-mcp's exceptions (`CodexMcpError`), and the one JSON-RPC error both ends
of a connection share (`McpError`; decision 60, retry policy in client/errors.py)."""

from __future__ import annotations

from typing import Any


class CodexMcpError(Exception):
    """Base class of every error codex-mcp raises. `retryable`: another attempt may succeed;
    `fate_unknown`: the peer may have received (and acted on) the request anyway."""

    retryable: bool = False
    fate_unknown: bool = False


class McpError(CodexMcpError):
    """A JSON-RPC error: raised to answer a request with it, or by a request the peer answered
    with it. `method` names the request it answers, when the asking side knows it; then the
    text reads `method: message (code N)`."""

    def __init__(
        self, code: int, message: str, data: Any = None, method: str | None = None
    ) -> None:
        if method is None:
            super().__init__(message)
        else:
            super().__init__(f"{method}: {message} (code {code})")
        self.code = code
        self.message = message
        self.data = data
        self.method = method

    @property
    def retryable(self) -> bool:  # type: ignore[override]
        """The peer's `data.retryable` wins; else -32603 (internal error) and the
        implementation range -32000..-32099, which servers use for transient trouble."""
        if isinstance(self.data, dict) and isinstance(self.data.get("retryable"), bool):
            return bool(self.data["retryable"])
        return self.code == -32603 or -32099 <= self.code <= -32000

    def to_error(self) -> dict[str, Any]:
        """The `error` member of the response that answers with this error."""
        error: dict[str, Any] = {"code": self.code, "message": self.message}
        if self.data is not None:
            error["data"] = self.data
        return error
