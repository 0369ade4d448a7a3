"""How a log line names the session it is about: by the first characters of its id, a bearer
credential (specs/http.md, "Security"; codex_mcp.session_logs formats the tag)."""

from __future__ import annotations

from typing import Final

#: Characters of a session id that logs show (48 of its 192 bits).
LOGGED_ID_CHARS: Final = 8
#: How a line names its session, at its start.
TAG_START: Final = "[session "


#: Characters of a value from outside (a path, a header, a name) that a log line keeps.
LOGGED_VALUE_CHARS: Final = 200


def printable(value: object, limit: int = LOGGED_VALUE_CHARS) -> str:
    """A value from outside as a log line may show it: its control characters, line breaks
    (U+2028 included) and terminal escapes written as Python escapes (`\\x1b`, `\\n`), so
    it can neither start a line of its own nor drive the terminal reading the log; at most
    `limit` characters of it. Every log line that shows what a client sent goes through
    this (specs/isolation.md, "Logs")."""
    text = value if type(value) is str else str(value)
    if len(text) > limit:
        text = text[:limit] + "..."
    if text.isprintable():  # the usual case, one pass in C
        return text
    return "".join(
        each if each.isprintable() else each.encode("unicode_escape").decode("ascii")
        for each in text
    )


def session_label(session_id: str | None) -> str:
    """How a log line names a session: its id's first characters ("-" for none). A client
    may name any id: the label is `printable`."""
    return printable(session_id[:LOGGED_ID_CHARS]) if session_id else "-"


#: A task's id is a bearer secret too (its handle): logs name it the same way.
task_label = session_label


def session_extra(session_id: str | None) -> dict[str, str] | None:
    """`extra=` for a line about the session `session_id` (None: a session without an id,
    stdio's only one, which needs no name)."""
    return {"session_tag": f"{TAG_START}{session_label(session_id)}] "} if session_id else None
