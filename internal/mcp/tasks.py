"""Tasks (the `io.modelcontextprotocol/tasks` extension of 2026-07-28, SEP-2663): when a call
becomes one (decision 17), shapes (specs/mcp-2026-07-28.md, 1.11), bounds (specs/isolation.md,
"Tasks"), replicas (specs/scale.md)."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import secrets
import time
from collections import OrderedDict
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any, Final, Protocol

from .errors import McpError
from .jsonrpc import INTERNAL_ERROR, JsonObject, invalid_params
from .log_names import task_label
from .request_meta import RESULT_TASK

log = logging.getLogger("codex_mcp.tasks")

WORKING: Final = "working"
INPUT_REQUIRED: Final = "input_required"
COMPLETED: Final = "completed"
FAILED: Final = "failed"
CANCELLED: Final = "cancelled"
TERMINAL: Final = frozenset({COMPLETED, FAILED, CANCELLED})

DEFAULT_TTL_MS: Final = 60 * 60 * 1000
DEFAULT_POLL_INTERVAL_MS: Final = 500
#: The methods that follow a task (tasks/get, tasks/update, tasks/cancel).
TASK_METHODS: Final = frozenset({"tasks/get", "tasks/update", "tasks/cancel"})
DEFAULT_MAX_TASKS: Final = 10_000
DEFAULT_MAX_TASKS_PER_PRINCIPAL: Final = 1_000
#: Seconds a task waits for tasks/update before it fails (a human may be answering).
DEFAULT_INPUT_TIMEOUT: Final = 600.0
#: JSON-RPC server-error codes: no room for another task; a question left unanswered.
SERVER_BUSY: Final = -32000
INPUT_TIMEOUT: Final = -32001

#: Told every change of a task (its DetailedTask): the subscriptions that follow it.
TaskListener = Callable[["TaskRecord"], None]


class TooManyTasks(McpError):
    """No room for another task: every task the cap allows is still running."""

    def __init__(self, message: str, limit: int) -> None:
        super().__init__(SERVER_BUSY, message, {"reason": "too_many_tasks", "limit": limit})


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


class TaskRecord:
    """One task: its status, its questions waiting for answers, its outcome."""

    def __init__(self, store: TaskStore, principal: str | None, ttl_ms: int) -> None:
        self.store = store
        self.id = secrets.token_urlsafe(18)  # the handle is a bearer secret: unguessable
        self.principal = principal
        self.status = WORKING
        self.status_message: str | None = None
        self.created_at = self.updated_at = _now()
        #: When it reached a terminal status (monotonic): it is kept ttlMs from then.
        self.finished_at: float | None = None
        self._input_timer: asyncio.TimerHandle | None = None
        self.ttl_ms = ttl_ms
        self.result: JsonObject | None = None
        self.error: JsonObject | None = None
        self.runner: asyncio.Task[Any] | None = None
        #: Questions waiting for tasks/update: key -> (input request, the future it fills).
        self.questions: dict[str, tuple[JsonObject, asyncio.Future[Any]]] = {}
        self._keys_used: set[str] = set()

    # -- the wire shapes ------------------------------------------------------------
    def info(self) -> JsonObject:
        info: JsonObject = {
            "taskId": self.id,
            "status": self.status,
            "createdAt": self.created_at,
            "lastUpdatedAt": self.updated_at,
            "ttlMs": self.ttl_ms,
            "pollIntervalMs": self.store.poll_interval_ms,
        }
        if self.status_message is not None:
            info["statusMessage"] = self.status_message
        return info

    def detailed(self) -> JsonObject:
        """The DetailedTask: the task plus what its status carries."""
        task = self.info()
        if self.status == INPUT_REQUIRED:
            task["inputRequests"] = {key: asked for key, (asked, _) in self.questions.items()}
        elif self.status == COMPLETED and self.result is not None:
            task["result"] = self.result
        elif self.status == FAILED and self.error is not None:
            task["error"] = self.error
        return task

    def created_result(self) -> JsonObject:
        return {"resultType": RESULT_TASK, **self.info()}

    # -- questions ------------------------------------------------------------------
    def unique_key(self, key: str) -> str:
        """`key`, or a variant of it: a key names one question over the task's life."""
        candidate, n = key, 1
        while candidate in self._keys_used:
            n += 1
            candidate = f"{key}-{n}"
        self._keys_used.add(candidate)
        return candidate

    async def ask(self, key: str, request: JsonObject) -> Any:
        """Park the task on a question until tasks/update answers it."""
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self.questions[key] = (request, future)
        self._set(INPUT_REQUIRED)
        try:
            return await future
        finally:
            self.questions.pop(key, None)
            if not self.questions and self.status == INPUT_REQUIRED:
                self._set(WORKING)

    def answer(self, responses: JsonObject, check: Callable[[str, str, Any], Any]) -> None:
        """Deliver answers; keys not waiting (never asked, already answered) are ignored,
        and a partial set leaves the task waiting for the rest. An answer of the wrong
        shape fails the whole update (-32602) and leaves every question waiting."""
        accepted = []
        for key, response in responses.items():
            waiting = self.questions.get(key)
            if waiting is not None and not waiting[1].done():
                accepted.append((key, waiting[1], check(key, waiting[0]["method"], response)))
        for key, future, answer in accepted:
            del self.questions[key]  # gone from the next tasks/get at once
            future.set_result(answer)
        if accepted and not self.questions and self.status == INPUT_REQUIRED:
            self._set(WORKING)

    # -- lifecycle ------------------------------------------------------------------
    def _set(self, status: str, message: str | None = None) -> None:
        if self.status in TERMINAL:
            return
        if status == INPUT_REQUIRED and self._input_timer is None:
            self._input_timer = asyncio.get_running_loop().call_later(
                self.store.input_timeout, self._unanswered
            )
        elif status != INPUT_REQUIRED and self._input_timer is not None:
            self._input_timer.cancel()
            self._input_timer = None
        self.status = status
        self.status_message = message
        self.updated_at = _now()
        if status in TERMINAL:
            self.store.ended(self)
        self.store.changed(self)

    def _unanswered(self) -> None:
        """Nobody answered within the input timeout: the questions fail, and with them
        the task unless its handler catches that."""
        self._input_timer = None
        error = McpError(
            INPUT_TIMEOUT,
            f"No answer to the task's input request within {self.store.input_timeout:g} s",
            {"reason": "input_timeout"},
        )
        for _, future in list(self.questions.values()):
            if not future.done():
                future.set_exception(error)

    def finished(self, runner: asyncio.Task[Any]) -> None:
        """The done-callback of the task's work."""
        if runner.cancelled():
            self._set(CANCELLED, "The task was cancelled.")
            return
        exc = runner.exception()
        if exc is None:
            result = runner.result()
            self.result = result if type(result) is dict else {"content": []}
            self._set(COMPLETED)
        elif isinstance(exc, McpError):
            self.error = exc.to_error()
            self._set(FAILED, exc.message)
        else:
            log.error("task %s failed", task_label(self.id), exc_info=exc)
            self.error = {"code": INTERNAL_ERROR, "message": f"Internal error: {exc}"}
            self._set(FAILED, self.error["message"])

    def cancel(self) -> None:
        if self.status not in TERMINAL and self.runner is not None:
            self.runner.cancel()

    def expired(self, now: float) -> bool:
        return self.finished_at is not None and now - self.finished_at > self.ttl_ms / 1000


class RemoteTasks(Protocol):
    """Tasks of other replicas, through a store they share (with this one's mirrored)."""

    async def save(self, record: TaskRecord) -> None:
        """Mirror a new task, durably: the client may poll another replica at once."""

    async def get(self, task_id: str, principal: str | None) -> JsonObject | None:
        """The caller's task's DetailedTask as last mirrored, or None."""

    def update(self, task_id: str, responses: JsonObject) -> None:
        """Pass answers on to the task's process."""

    def cancel(self, task_id: str) -> None:
        """Ask the task's process to cancel it."""


class TaskStore:
    """This process's tasks, by id; a finished task is readable for ttlMs after it ends
    (unless the caps need its room)."""

    #: Tasks made by other replicas (a shared store); None: there are none.
    remote: RemoteTasks | None = None

    def __init__(
        self,
        ttl_ms: int = DEFAULT_TTL_MS,
        poll_interval_ms: int = DEFAULT_POLL_INTERVAL_MS,
        *,
        max_tasks: int = DEFAULT_MAX_TASKS,
        max_per_principal: int = DEFAULT_MAX_TASKS_PER_PRINCIPAL,
        input_timeout: float = DEFAULT_INPUT_TIMEOUT,
    ) -> None:
        self.ttl_ms = ttl_ms
        self.poll_interval_ms = poll_interval_ms
        self.max_tasks = max_tasks
        self.max_per_principal = max_per_principal
        self.input_timeout = input_timeout
        #: Tasks not yet finished: calls in flight, for the caps and for draining.
        self.active = 0
        self._tasks: dict[str, TaskRecord] = {}
        # Finished tasks in the order they finished (their expiry order), in all and per
        # principal, so expiring and making room take the oldest without a scan.
        self._done: OrderedDict[str, TaskRecord] = OrderedDict()
        self._done_by: dict[str | None, OrderedDict[str, TaskRecord]] = {}
        self._held_by: dict[str | None, int] = {}
        self._idle: asyncio.Event | None = None
        self._listeners: list[TaskListener] = []

    def __len__(self) -> int:
        return len(self._tasks)

    def add_listener(self, listener: TaskListener) -> None:
        self._listeners.append(listener)

    def changed(self, record: TaskRecord) -> None:
        for listener in list(self._listeners):
            try:
                listener(record)
            except Exception:
                log.exception("a task listener failed")

    def make_room(self, principal: str | None) -> None:
        """Room for one more task of `principal`, dropping finished tasks early if need
        be; TooManyTasks when the caps are full of running ones."""
        self._purge()
        if self._held_by.get(principal, 0) >= self.max_per_principal:
            done = self._done_by.get(principal)
            if not done:
                raise TooManyTasks(
                    f"Too many tasks: this caller already has {self.max_per_principal} "
                    "running; wait for one to finish or cancel one (tasks/cancel)",
                    self.max_per_principal,
                )
            self._forget(next(iter(done.values())))
        if len(self._tasks) >= self.max_tasks:
            if not self._done:
                raise TooManyTasks(
                    f"Too many tasks on this server (at most {self.max_tasks} running); "
                    "try again later",
                    self.max_tasks,
                )
            self._forget(next(iter(self._done.values())))

    def create(self, principal: str | None) -> TaskRecord:
        self.make_room(principal)
        record = TaskRecord(self, principal, self.ttl_ms)
        self._tasks[record.id] = record
        self._held_by[principal] = self._held_by.get(principal, 0) + 1
        self.active += 1
        return record

    def ended(self, record: TaskRecord) -> None:
        """A task reached a terminal status: kept ttlMs from now, no longer in flight."""
        record.finished_at = time.monotonic()
        if self._tasks.get(record.id) is not record:
            return
        self.active -= 1
        self._done[record.id] = record
        self._done_by.setdefault(record.principal, OrderedDict())[record.id] = record
        if self.active == 0 and self._idle is not None:
            self._idle.set()

    def find(self, task_id: Any, principal: str | None) -> TaskRecord | None:
        """The caller's task if this process holds it."""
        record = self._tasks.get(task_id) if isinstance(task_id, str) else None
        return record if record is not None and record.principal == principal else None

    def held(self, task_id: str) -> TaskRecord | None:
        """This process's task with this id, whoever's it is (for another replica passing
        on a caller's update, checked there)."""
        return self._tasks.get(task_id)

    async def persist(self, record: TaskRecord) -> None:
        """Make a new task known to the other replicas before its handle is sent."""
        if self.remote is not None:
            await self.remote.save(record)

    def _purge(self) -> None:
        """Drop the finished tasks past their ttlMs: the oldest first, stopping at the
        first one still kept."""
        now = time.monotonic()
        while self._done:
            oldest = next(iter(self._done.values()))
            if not oldest.expired(now):
                break
            self._forget(oldest)

    def _forget(self, record: TaskRecord) -> None:
        """Drop a finished task."""
        del self._tasks[record.id]
        del self._done[record.id]
        principal = record.principal
        done = self._done_by[principal]
        del done[record.id]
        if not done:
            del self._done_by[principal]
        held = self._held_by[principal] - 1
        if held:
            self._held_by[principal] = held
        else:
            del self._held_by[principal]

    async def drain(self, timeout: float) -> None:
        """Shutting down: let running tasks finish (bounded), then cancel the rest."""
        if self.active:
            self._idle = asyncio.Event()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._idle.wait(), timeout)
        runners = [r.runner for r in self._tasks.values() if r.runner is not None]
        self.cancel_all()
        if runners:
            await asyncio.wait(runners, timeout=1.0)

    def cancel_all(self) -> None:
        for record in list(self._tasks.values()):
            record.cancel()


def unknown_task(task_id: Any) -> McpError:
    return invalid_params(f"Invalid params: unknown taskId {task_id!r}", {"taskId": task_id})


__all__ = [
    "CANCELLED",
    "COMPLETED",
    "FAILED",
    "INPUT_REQUIRED",
    "TASK_METHODS",
    "TERMINAL",
    "WORKING",
    "RemoteTasks",
    "TaskRecord",
    "TaskStore",
    "TooManyTasks",
    "unknown_task",
]
