"""What is in flight on one connection to a child, and who has been sending the child requests
(specs/gateway.md, "Relaying": Which call). The relay is the only writer; the child reads it
for its idleness. One table per connection: a restarted child, or a child's second connection
(its lane), counts its request ids, tasks and progress tokens anew."""

from __future__ import annotations

from collections.abc import Hashable
from typing import TYPE_CHECKING, Any, Final, Protocol

if TYPE_CHECKING:
    from codex_mcp.core.context import RequestContext
    from codex_mcp.core.jsonrpc import JsonObject
    from codex_mcp.core.session import ServerSession

#: The `_meta` key that ties a message to a 2025-11-25 task.
RELATED_TASK: Final = "io.modelcontextprotocol/related-task"


class Entry(Protocol):
    """One request of ours in flight on the child, for one front request (relay/calls.py:
    the hot path's RelayedCall, or the FrontCall an awaited request waits for)."""

    @property
    def ctx(self) -> RequestContext: ...

    def interrupt(self, question: BaseException) -> None:
        """End our request with `question` (an input-required round of a 2026-07-28 front:
        the front's retry runs it again)."""


class InFlight:
    __slots__ = ("activity", "calls", "open_tasks", "progress", "tasks")

    def __init__(self) -> None:
        #: Our requests in flight -> the front request each serves.
        self.calls: dict[Hashable, Entry] = {}
        #: The child's task ids -> the front request waiting on each (its tasks/result, a
        #: task the gateway follows): what the child sends about one goes there.
        self.tasks: dict[str, Entry] = {}
        #: The child's tasks front sessions hold that have not ended (it is not idle then).
        self.open_tasks = 0
        #: Requests sent for fronts so far (the idle watch's sign of use).
        self.activity = 0
        #: The progress token a 2025-11-25 task-augmented call gave the child -> where its
        #: progress goes, for the task's life (relay/front_tasks.py).
        self.progress: dict[Hashable, Any] = {}

    @property
    def busy(self) -> bool:
        return bool(self.calls) or self.open_tasks > 0

    def entry_for(self, origin: Hashable, params: JsonObject | None) -> Entry | None:
        """The request a message of the child's names: by the request whose stream carried
        it (HTTP), its progress token (our request id) or its related task."""
        if origin is not None:
            return self.calls.get(origin)
        meta = params.get("_meta") if params is not None else None
        if not isinstance(meta, dict):
            return None
        token = meta.get("progressToken")
        if isinstance(token, Hashable) and token in self.calls:
            return self.calls[token]
        related = meta.get(RELATED_TASK) if self.tasks else None
        task_id = related.get("taskId") if isinstance(related, dict) else None
        return self.tasks.get(task_id) if isinstance(task_id, str) else None


class Callers:
    """Who has sent a child requests over its life, and what it sent that no call claimed
    (relay/attribution.py decides with it; gateway_status reports it)."""

    __slots__ = ("last", "mixed", "recorded", "unrouted", "unrouted_in_calls")

    def __init__(self) -> None:
        #: The last client session that sent it a request, and whether any other (or a
        #: 2026-07-28 caller) ever did.
        self.last: ServerSession | None = None
        self.mixed = False
        #: Messages no call could be tied to, so no client was given them; of those, the
        #: ones sent while calls were in flight (it needs per_session).
        self.unrouted = 0
        self.unrouted_in_calls = 0
        #: The kinds of those recorded for `codex-mcp lint` in this process (asked_record).
        self.recorded: set[str] = set()

    @property
    def sole(self) -> ServerSession | None:
        """The one client session that alone has ever sent it a request, if one has."""
        return None if self.mixed else self.last
