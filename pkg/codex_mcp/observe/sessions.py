"""Sessions opened and ended, by era, as the core tells its extensions (enable.Observed) and,
over HTTP, the reason the manager ends one for."""

from __future__ import annotations

from typing import Any

from .plain_metrics import SESSIONS_CREATED, SESSIONS_ENDED, SESSIONS_LIVE, family

SESSION, STATELESS = "session", "stateless"
#: The manager's reasons (transports/http/manager.py), as the metric's label says them.
REASONS = {
    "idle": "expired",
    "idle here": "expired",
    "deleted by the client": "deleted",
    "server shutting down": "shutdown",
}


class SessionCounts:
    def __init__(self) -> None:
        created = family(SESSIONS_CREATED)
        self.live = family(SESSIONS_LIVE).get(SESSION)
        self.created = created.get(SESSION)
        self.stateless = created.get(STATELESS)
        self.ended = family(SESSIONS_ENDED)
        #: Why the session ending now ends (set by the HTTP manager's `end`).
        self.reason = "closed"

    # -- told by the core (enable.Observed, its session hooks) ---------------------------
    def session_opened(self) -> None:
        self.created.inc()
        self.live.inc()

    def session_ended(self) -> None:
        self.live.dec()
        self.ended.get(SESSION, self.reason).inc()

    def stateless_opened(self) -> None:
        self.stateless.inc()

    def watch_manager(self, manager: Any) -> None:
        """The HTTP manager says why it ends a session (expired, deleted, shutdown)."""
        end = manager.end

        def ending(session_id: str, reason: str) -> bool:
            self.reason = REASONS.get(reason, "closed")
            try:
                return bool(end(session_id, reason))
            finally:
                self.reason = "closed"

        manager.end = ending
