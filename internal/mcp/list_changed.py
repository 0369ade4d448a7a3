"""`notifications/*/list_changed` to a session, debounced and written apart (specs/design.md,
"list_changed"): the first change of a kind goes out at once, in a write of its own; the
changes that follow within `LIST_CHANGED_DELAY` are one more notification when the delay is
over. Codex 0.171 with `features.mcp_tool_list_changed` re-lists on each one, and its
app-server was seen to leave a call unanswered when the notification came in the same
burst as the call's result (issue 32): a notification never shares a write with an answer,
a change made by a call still leaves before that call's answer (issue 29: Codex's next
model request has the new tool), and a tool that changes the list many times costs the
client one re-list per delay, not one per change."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Final

from .jsonrpc import notification

if TYPE_CHECKING:
    from .session import ServerSession

#: After a list_changed, how long further changes of its kind wait to be announced together
#: (specs/decisions.md): short against anything a client does next (a model turn takes
#: seconds), long enough to fold a burst of changes into one re-list.
LIST_CHANGED_DELAY: Final = 0.05


class ListChangedAnnouncer:
    """The list_changed notifications of one session. A change is never dropped while the
    session is open: it is announced at once, or by the one notification that ends the
    delay it fell in (the client re-lists then, and sees every change made until then)."""

    __slots__ = ("_again", "_session", "_waiting")

    def __init__(self, session: ServerSession) -> None:
        self._session = session
        #: Kind -> the end of the delay after its last notification.
        self._waiting: dict[str, asyncio.TimerHandle] = {}
        #: The kinds that changed again during their delay.
        self._again: set[str] = set()

    def announce(self, kind: str) -> None:
        if kind in self._waiting:
            self._again.add(kind)
        else:
            self._send(kind)

    def _send(self, kind: str) -> None:
        session = self._session
        if session.closed:
            return
        session.send_apart(notification(f"notifications/{kind}/list_changed"))
        loop = asyncio.get_running_loop()
        self._waiting[kind] = loop.call_later(LIST_CHANGED_DELAY, self._delay_over, kind)

    def _delay_over(self, kind: str) -> None:
        del self._waiting[kind]
        if kind in self._again:
            self._again.discard(kind)
            self._send(kind)

    def close(self) -> None:
        """The session ended: nobody is left to tell."""
        for handle in self._waiting.values():
            handle.cancel()
        self._waiting.clear()
        self._again.clear()


__all__ = ["LIST_CHANGED_DELAY", "ListChangedAnnouncer"]
