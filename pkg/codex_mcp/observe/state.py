"""A snapshot of a running server, for the status page and the state gauges, read from what
the serving code keeps anyway (specs/observability.md, the seams)."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

from .. import __version__

if TYPE_CHECKING:
    from ..core.server import ServerCore

STARTED = time.time()
STDERR_TAIL_CHARS = 2000
#: A child whose command cannot run at all is "not found" or "not executable" (never retried);
#: one whose server wants the user's login, "needs login" (tried again once there is one).
CHILD_STATES = (
    "idle", "starting", "ready", "restarting", "failed", "stopped", "not found", "not executable",
    "needs login",
)  # fmt: skip


class ServerState:
    """What to read a snapshot from: the core, and over HTTP its session manager."""

    def __init__(self, core: ServerCore, manager: Any = None, in_flight: Any = None) -> None:
        self.core = core
        self.manager = manager
        #: Calls being served now (dispatch's MetricsSink keeps the count).
        self.in_flight = in_flight
        #: The slow-reader totals already added to their counters.
        self._slow_reported = (0, 0, 0)

    def snapshot(self) -> dict[str, Any]:
        now = time.time()
        state: dict[str, Any] = {
            "server": self.core.server_info.get("name"),
            "version": __version__,
            "started": STARTED,
            "uptime_sec": round(now - STARTED, 1),
            "sessions": len(self.core.sessions),
            "calls_in_flight": self.in_flight.count if self.in_flight is not None else None,
        }
        if self.manager is not None:
            stats = self.manager.stats()
            state["sessions"] = stats["sessions"]
            state["max_sessions"] = stats["max_sessions"]
            state["session_list"] = self._sessions(now)
            state["sse_streams"], state["sse_queued"] = self._streams()
            slow = self.manager.slow_readers
            state["sse_dropped_events"] = slow.shed_events
            state["sse_dropped_bytes"] = slow.shed_bytes
            state["sse_closed_slow"] = slow.closed_streams
            store = self.manager.store
            if getattr(store, "shared", False):
                state["store"] = {
                    "kind": "redis",
                    "available": bool(store.available),
                    "replica": getattr(store, "node", None),
                }
        children = self._children()
        if children is not None:
            state["children"] = children
        app_servers = getattr(self.core.provider, "running", None)
        if isinstance(app_servers, int):
            state["codex_app_servers"] = app_servers
        return state

    def _sessions(self, now: float) -> list[dict[str, Any]]:
        """Each live HTTP session: a short label (never the id: it is a credential),
        idle time and open exchanges; at most 50."""
        from ..session_logs import session_label

        monotonic = time.monotonic()
        listed = []
        for session_id, session in list(self.manager.sessions.items())[:50]:
            core_session = session.core_session
            listed.append(
                {
                    "session": session_label(session_id),
                    "protocol": core_session.protocol_version,
                    "client": (core_session.client_info or {}).get("name"),
                    "idle_sec": round(monotonic - session.last_seen, 1),
                    "calls_in_flight": core_session.in_flight,
                }
            )
        return listed

    def _streams(self) -> tuple[int, int]:
        """SSE streams with a reader now, and the events waiting in them."""
        open_streams = queued = 0
        for session in list(self.manager.sessions.values()):
            for stream in list(session.streams.by_key.values()):
                if stream.sse and stream.queue is not None:
                    open_streams += 1
                    queued += stream.queue.qsize()
        return open_streams, queued

    def _children(self) -> list[dict[str, Any]] | None:
        provider = self.core.provider
        shared = getattr(provider, "shared", None)
        per_session = getattr(provider, "per_session", None)
        if shared is None or per_session is None:
            return None
        from ..gateway.status import child_status

        listed = []
        for child in [*shared, *per_session.live]:
            row = child_status(child)
            row["stderr_tail"] = _stderr_tail(child)
            listed.append(row)
        return listed

    async def probe_store(self) -> None:
        """One timed round trip to the shared store (Redis), when there is one: a bare
        PING on its client, so the store's own up/down bookkeeping is left alone."""
        store = getattr(self.manager, "store", None)
        client = getattr(store, "redis", None)
        if client is None or not getattr(store, "shared", False):
            return
        from . import metrics

        started = time.perf_counter()
        try:
            await client.ping()
        except Exception:  # down: the store's flag (a gauge) says so
            return
        metrics.redis_series().round_trips.observe(time.perf_counter() - started)

    def update_gauges(self, state: dict[str, Any] | None = None) -> None:
        """Set the gauges of state that lives elsewhere (children, app-servers, Redis)."""
        from . import metrics

        state = state if state is not None else self.snapshot()
        children = state.get("children")
        if children is not None:
            counts = dict.fromkeys(CHILD_STATES, 0)
            for child in children:
                counts[child["state"]] = counts.get(child["state"], 0) + 1
            for name, count in counts.items():
                metrics.CHILDREN.labels(name).set(count)
            for child in children:
                metrics.CHILD_RESTARTS.labels(child["name"]).set(child["restarts"])
        if "sse_streams" in state:
            metrics.SSE_STREAMS.set(state["sse_streams"])
            metrics.SSE_EVENTS_QUEUED.set(state["sse_queued"])
            # Totals kept by the transport: their counters get what was added since.
            totals = (
                state["sse_dropped_events"],
                state["sse_dropped_bytes"],
                state["sse_closed_slow"],
            )
            counters = (
                metrics.SSE_EVENTS_DROPPED,
                metrics.SSE_BYTES_DROPPED,
                metrics.SSE_STREAMS_CLOSED_SLOW,
            )
            for counter, total, reported in zip(counters, totals, self._slow_reported, strict=True):
                if total > reported:
                    counter.inc(total - reported)
            self._slow_reported = totals
        if "codex_app_servers" in state:
            metrics.APP_SERVERS.set(state["codex_app_servers"])
        store = state.get("store")
        if store is not None:
            metrics.redis_series().available.set(1 if store["available"] else 0)


def _stderr_tail(child: Any) -> str:
    connection = child.connection
    if connection is not None:
        tail = connection.stderr_tail
    else:
        data = (child.last_error_data or {}).get("data")
        original = data.get("original") if isinstance(data, dict) else None
        tail = original.get("stderr", "") if isinstance(original, dict) else ""
    return str(tail or "")[-STDERR_TAIL_CHARS:]
