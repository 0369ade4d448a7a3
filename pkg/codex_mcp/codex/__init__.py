"""Codex served as MCP tools again: `codex` and `codex-reply` on top of `codex app-server`
(specs/codex-tools.md, "What we serve", lists the modules)."""

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
