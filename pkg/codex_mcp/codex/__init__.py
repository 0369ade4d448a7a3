"""Codex served as MCP tools again: `codex` and `codex-reply` on top of `codex app-server`.

- `binary`: find the Codex CLI (CODEX_BIN, else PATH) and check its version.
- `connection`: JSON-RPC with one app-server process (the narrow seam to the transport).
- `protocol`: the app-server methods and params, as data.
- `driver` / `run`: threads and turns, events, approvals, interrupts.
- `tools`, `elicitation`, `events`, `calls`: the MCP side (tool definitions, argument
  parsing, approval elicitations, `codex/event` notifications, one call on a driver).
- `session_codex`, `provider`: a Provider serving them, one app-server per MCP session.
"""

from .binary import CODEX_BIN_ENV, MIN_VERSION, CodexBinary, find_codex
from .driver import CodexDriver
from .errors import (
    ApprovalDeclined,
    AppServerGone,
    AppServerRequestFailed,
    CodexError,
    CodexUnavailable,
    ThreadBusy,
    TurnFailed,
    TurnInterrupted,
    UnknownThread,
)
from .protocol import ApprovalDetails, ApprovalKind, ThreadOptions
from .run import Approver, CodexEvent, EventCallback, TurnResult

__all__ = [
    "CODEX_BIN_ENV",
    "MIN_VERSION",
    "AppServerGone",
    "AppServerRequestFailed",
    "ApprovalDeclined",
    "ApprovalDetails",
    "ApprovalKind",
    "Approver",
    "CodexBinary",
    "CodexDriver",
    "CodexError",
    "CodexEvent",
    "CodexUnavailable",
    "EventCallback",
    "ThreadBusy",
    "ThreadOptions",
    "TurnFailed",
    "TurnInterrupted",
    "TurnResult",
    "UnknownThread",
    "find_codex",
]
