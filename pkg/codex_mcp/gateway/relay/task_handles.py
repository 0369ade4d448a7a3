"""The 2025-11-25 task handles the gateway holds for its front sessions, as bookkeeping alone
(no I/O, no event loop: the time is given): each a child's task under an id of ours, bound to
the session that made it, bounded per session and in all, kept while the task runs and a while
after it ends, dropped at its ttl (specs/gateway.md, "Relaying": Tasks of 2025-11-25)."""

from __future__ import annotations

import math
import secrets
from collections.abc import Callable, Hashable, Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final, TypeGuard

from codex_mcp.core.errors import McpError
from codex_mcp.core.jsonrpc import INVALID_REQUEST, JsonObject

from ..children.child import Child
from ..children.connection import Connection

if TYPE_CHECKING:
    from codex_mcp.core.session import ServerSession

TERMINAL: Final = frozenset({"completed", "failed", "cancelled"})
#: Tasks one front session may hold at once; past it, the oldest that ended makes room, and
#: with none ended a new task is refused.
MAX_TASKS_PER_SESSION: Final = 64
#: Tasks the gateway holds across all its sessions.
MAX_TASKS: Final = 4096
#: A task the child says ended is kept this long for its tasks/result (or less: its ttl).
KEEP_ENDED_SECONDS: Final = 600.0
#: The largest ttl a front may ask for (ms): a number beyond any real lifetime is refused.
MAX_TTL_MS: Final = 2**53


@dataclass(eq=False, slots=True)
class Handle:
    """One child task as the front sees it: whose it is, where it lives (`child`, and
    `where`: the connection it was made on), the child's id for it; our id is `front_id`."""

    session: ServerSession
    child: Child
    where: Connection
    child_id: str
    tool: str
    #: The token the child's progress for it carries (ours; None: the front asked for none).
    progress_token: Hashable = None
    front_id: str = field(default_factory=lambda: secrets.token_urlsafe(24))
    #: The task as last seen, under our id.
    task: JsonObject = field(default_factory=dict)
    #: When it is dropped (None: while its session lasts).
    expires: float | None = None
    ended: bool = False
    #: Held, its task not ended: what it holds open (its child's idleness, its progress
    #: route) is still held.
    open: bool = True


def is_ms(value: Any) -> TypeGuard[int | float]:
    """A number of milliseconds a ttl may be."""
    return type(value) in (int, float) and math.isfinite(value) and 0 <= value <= MAX_TTL_MS


class TaskHandles:
    """The handles, by our id, by session and by (connection, the child's id).
    `released(handle)` is called once for each, when its task ends or it is dropped first
    (what it held open, its child's idleness and its progress route, is let go)."""

    def __init__(
        self,
        released: Callable[[Handle], None],
        *,
        per_session: int = MAX_TASKS_PER_SESSION,
        total: int = MAX_TASKS,
    ) -> None:
        self._released = released
        self.per_session = per_session
        self.total = total
        self.by_id: dict[str, Handle] = {}
        self._of_session: dict[ServerSession, dict[str, Handle]] = {}
        self._of_child: dict[tuple[Hashable, str], Handle] = {}

    def __len__(self) -> int:
        return len(self.by_id)

    def mine(self, session: ServerSession, front_id: str, now: float) -> Handle | None:
        """The handle `front_id` names when `session` holds it (any other gets None: whose
        it is is not told)."""
        self.sweep(now)
        handle = self.by_id.get(front_id)
        return handle if handle is not None and handle.session is session else None

    def of_child(self, where: Hashable, child_id: Any) -> Handle | None:
        """The handle of the child's task `child_id`, made on the connection whose in-flight
        table is `where`."""
        return self._of_child.get((where, child_id)) if isinstance(child_id, str) else None

    def of_session(self, session: ServerSession, now: float) -> list[Handle]:
        self.sweep(now)
        return list(self._of_session.get(session, {}).values())

    def make_room(self, session: ServerSession, now: float) -> None:
        """Room for one more task of `session`: the expired go, then its oldest that ended
        (or the gateway's); with none ended and the session (or the gateway) full, refused."""
        self.sweep(now)
        mine = self._of_session.get(session, {})
        if len(mine) >= self.per_session:
            self._drop_oldest_ended(
                mine.values(),
                f"too many tasks: this session holds {self.per_session} that have not ended "
                "(get their results, or cancel some)",
            )
        if len(self.by_id) >= self.total:
            self._drop_oldest_ended(
                self.by_id.values(), f"too many tasks in the gateway ({self.total})"
            )

    def _drop_oldest_ended(self, handles: Iterable[Handle], refusal: str) -> None:
        oldest = next((handle for handle in handles if handle.ended), None)
        if oldest is None:
            raise McpError(INVALID_REQUEST, refusal)
        self.drop(oldest)

    def hold(self, handle: Handle) -> None:
        """Hold it (after `make_room`)."""
        self._of_session.setdefault(handle.session, {})[handle.front_id] = handle
        self.by_id[handle.front_id] = handle
        self._of_child[(handle.where.inflight, handle.child_id)] = handle

    def saw(self, handle: Handle, task: JsonObject, now: float) -> JsonObject:
        """The child's view of the task, under our id, kept as the handle's last: its ttl
        sets when the handle goes, a terminal status ends it."""
        seen = {key: value for key, value in task.items() if key != "_meta"}
        seen["taskId"] = handle.front_id
        handle.task = seen
        ttl = task.get("ttl")
        if is_ms(ttl) and handle.expires is None:
            handle.expires = now + min(ttl, MAX_TTL_MS) / 1000
        status = task.get("status")
        if isinstance(status, str) and status in TERMINAL:
            self.end(handle, now)
        return dict(seen)

    def end(self, handle: Handle, now: float, lost: str | None = None) -> None:
        """Its task ended (`lost`: with the connection it lived on, which this says): kept
        KEEP_ENDED_SECONDS more at most."""
        if lost is not None:
            handle.task = {**handle.task, "status": "failed", "statusMessage": lost}
        if handle.ended:
            return
        handle.ended = True
        keep = now + KEEP_ENDED_SECONDS
        handle.expires = keep if handle.expires is None else min(handle.expires, keep)
        self._release(handle)

    def _release(self, handle: Handle) -> None:
        if handle.open:
            handle.open = False
            self._released(handle)

    def drop(self, handle: Handle) -> None:
        self.by_id.pop(handle.front_id, None)
        mine = self._of_session.get(handle.session)
        if mine is not None:
            mine.pop(handle.front_id, None)
            if not mine:
                del self._of_session[handle.session]
        key = (handle.where.inflight, handle.child_id)
        if self._of_child.get(key) is handle:
            del self._of_child[key]
        self._release(handle)

    def sweep(self, now: float) -> None:
        """Drop the handles whose time is up (their ttl, or the wait after their end)."""
        for handle in [h for h in self.by_id.values() if h.expires is not None]:
            if handle.expires is not None and handle.expires <= now:
                self.drop(handle)

    def session_ended(self, session: ServerSession) -> list[Handle]:
        """Drop a closed session's handles; those whose task had not ended are returned (to
        be cancelled at their child: nobody can reach them any more)."""
        mine = list(self._of_session.get(session, {}).values())
        running = [handle for handle in mine if not handle.ended]
        for handle in mine:
            self.drop(handle)
        return running
