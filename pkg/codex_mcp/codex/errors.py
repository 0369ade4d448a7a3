"""What can go wrong driving Codex; each becomes an `isError` tool result whose text is
the message, never a protocol error."""

from __future__ import annotations

from codex_mcp.core.errors import CodexMcpError


class CodexError(CodexMcpError):
    """Base class of every error of this package."""

    def __init__(self, message: str, thread_id: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        #: The thread the failure belongs to, when there is one (results still name it).
        self.thread_id = thread_id


class CodexUnavailable(CodexError):
    """No usable Codex CLI: not found, not runnable, or too old."""


class AppServerGone(CodexError):
    """The `codex app-server` process exited or closed its pipes; every pending request
    fails with it."""


class AppServerRequestFailed(CodexError):
    """app-server answered one of our requests with a JSON-RPC error."""

    def __init__(self, method: str, code: int, message: str, thread_id: str | None = None) -> None:
        super().__init__(f"Codex app-server refused {method}: {message}", thread_id)
        self.method = method
        self.code = code
        self.detail = message


class UnknownThread(CodexError):
    """`codex-reply` named a thread this server did not start."""


class ThreadBusy(CodexError):
    """A turn is already running on the thread (a second one would steer it instead)."""


class TurnFailed(CodexError):
    """The turn ended with status `failed` (the model provider failed, a limit was hit...)."""


class TurnInterrupted(CodexError):
    """The turn was interrupted before it finished."""


class ApprovalDeclined(TurnInterrupted):
    """The caller refused a command or patch, so the turn was stopped and it did not run."""


class TooManyAppServers(CodexError):
    """Every app-server the server allows is running (one per session that used Codex)."""


class InvalidCodexArguments(CodexError):
    """A tool call's arguments do not fit the tool's schema."""


class ElicitationUnsupported(CodexMcpError):
    pass


class OutOfBounds(CodexError):
    """A `codex` call asked for more than the server's bounds allow it."""


class BoundsError(CodexMcpError, ValueError):
    """The bounds' settings are wrong (a start-up mistake)."""
