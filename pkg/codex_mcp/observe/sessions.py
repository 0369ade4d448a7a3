"""Sessions opened and ended, by era, from the core's own seams (open_session,
end_session, open_stateless) and, over HTTP, the reason the manager ends one for."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .plain_metrics import SESSIONS_CREATED, SESSIONS_ENDED, SESSIONS_LIVE, family

if TYPE_CHECKING:
    from ..core.server import ServerCore

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

    def watch_core(self, core: ServerCore) -> None:
        open_session, end_session, open_stateless = (
            core.open_session,
            core.end_session,
            core.open_stateless,
        )

        def opened(*args: Any, **kwargs: Any) -> Any:
            session = open_session(*args, **kwargs)
            self.created.inc()
            self.live.inc()
            return session

        def ended(session: Any) -> Any:
            self.live.dec()
            self.ended.get(SESSION, self.reason).inc()
            return end_session(session)

        def stateless(*args: Any, **kwargs: Any) -> Any:
            self.stateless.inc()
            return open_stateless(*args, **kwargs)

        core.open_session = opened  # type: ignore[method-assign]
        core.end_session = ended  # type: ignore[method-assign]
        core.open_stateless = stateless  # type: ignore[method-assign]

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
