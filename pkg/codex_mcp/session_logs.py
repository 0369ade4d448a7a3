"""Log lines that say which MCP session they are about (by `session_label`: the id is a
credential), and file logs without secrets (specs/http.md, "Security")."""

from __future__ import annotations

import logging
import re
from contextvars import Context, ContextVar, copy_context
from typing import Final

from .core.log_names import LOGGED_ID_CHARS, TAG_START, session_extra, session_label

#: The MCP session the running code serves (its `session_label`), or None.
SESSION: ContextVar[str | None] = ContextVar("codex_mcp_session", default=None)

#: Our line format: the tag (possibly empty) goes right before the message.
LINE_FORMAT: Final = "%(asctime)s %(levelname)s %(name)s: %(session_tag)s%(message)s"

#: RUST_LOG's most verbose level, below logging.DEBUG: every app-server message.
TRACE: Final = 5
logging.addLevelName(TRACE, "TRACE")

#: How many hex digits of a credential's SHA-256 name its caller in logs and rules.
PRINCIPAL_HEX_DIGITS: Final = 16


def principal_of_fingerprint(fingerprint: str | None) -> str | None:
    """The HTTP guard's credential fingerprint (SHA-256, hex) as logs, the audit log and the
    policy's rules name the caller: `sha256:` and its first 16 hex digits, never the token."""
    return f"sha256:{fingerprint[:PRINCIPAL_HEX_DIGITS]}" if fingerprint else None


_BEARER = re.compile(r"(bearer\s+)[^\s\"',;]+", re.IGNORECASE)


def context_naming(label: str | None) -> Context:
    """A copy of the current context in which SESSION is `label` (None: no session), for a
    task that lives longer than the request that starts it (a gateway child's supervisor)."""
    context = copy_context()
    context.run(SESSION.set, label)
    return context


class SessionTag(logging.Filter):
    """Sets `record.session_tag` from SESSION (once per record, whichever handler is first)."""

    def filter(self, record: logging.LogRecord) -> bool:
        if not hasattr(record, "session_tag"):
            session = SESSION.get()
            named = session and not (type(record.msg) is str and record.msg.startswith(TAG_START))
            record.session_tag = f"{TAG_START}{session}] " if named else ""
        return True


class RedactBearer(logging.Formatter):
    """File logs never keep bearer tokens (the Rust codex-mcp-server's rule); stderr stays as is."""

    def format(self, record: logging.LogRecord) -> str:
        return _BEARER.sub(r"\1****", super().format(record))


def level_number(level: str) -> int:
    """A logging level from our settings' names, RUST_LOG's included (`trace`, `warn`)."""
    number = logging.getLevelName(level.upper())
    if not isinstance(number, int):
        raise ValueError(f"unknown log level {level!r}")
    return number


__all__ = [
    "LINE_FORMAT",
    "LOGGED_ID_CHARS",
    "SESSION",
    "TAG_START",
    "TRACE",
    "RedactBearer",
    "SessionTag",
    "context_naming",
    "level_number",
    "session_extra",
    "session_label",
]
