"""Log lines that say which MCP session they are about, and file logs without secrets.

Code serving one session (a Codex provider's call, and every task it starts: the
app-server's reader, its stderr pump) sets `SESSION`; the filter turns it into a
`[session <id>] ` prefix on each line logged in that context, on every handler the
console scripts install. Lines that already carry a tag (the HTTP transport's own
session lines) are left as they are.

A session id is a bearer credential for its session (whoever holds it, with the
session's token if any, can act in it), so logs name a session by `session_label`:
the first characters of its id, enough to tell sessions apart in a log, far too few
to use.
"""

from __future__ import annotations

import logging
import re
from contextvars import ContextVar
from typing import Final

#: The MCP session the running code serves (its `session_label`), or None.
SESSION: ContextVar[str | None] = ContextVar("codex_mcp_session", default=None)

#: Our line format: the tag (possibly empty) goes right before the message.
LINE_FORMAT: Final = "%(asctime)s %(levelname)s %(name)s: %(session_tag)s%(message)s"

#: RUST_LOG's most verbose level, below logging.DEBUG: every app-server message.
TRACE: Final = 5
logging.addLevelName(TRACE, "TRACE")

#: Characters of a session id that logs show (48 of its 192 bits).
LOGGED_ID_CHARS: Final = 8


def session_label(session_id: str | None) -> str:
    """How a log line names a session: its id's first characters ("-" for none)."""
    return session_id[:LOGGED_ID_CHARS] if session_id else "-"


_BEARER = re.compile(r"(bearer\s+)[^\s\"',;]+", re.IGNORECASE)


class SessionTag(logging.Filter):
    """Sets `record.session_tag` from SESSION (once per record, whichever handler is first)."""

    def filter(self, record: logging.LogRecord) -> bool:
        if not hasattr(record, "session_tag"):
            session = SESSION.get()
            record.session_tag = f"[session {session}] " if session else ""
        return True


class RedactBearer(logging.Formatter):
    """File logs never keep bearer tokens (seed 004's rule); stderr stays as is."""

    def format(self, record: logging.LogRecord) -> str:
        return _BEARER.sub(r"\1****", super().format(record))


def level_number(level: str) -> int:
    """A logging level from our settings' names, RUST_LOG's included (`trace`, `warn`)."""
    number = logging.getLevelName(level.upper())
    if not isinstance(number, int):
        raise ValueError(f"unknown log level {level!r}")
    return number
