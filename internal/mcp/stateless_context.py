"""StatelessContext: a 2026-07-28 request's context, with RequestContext's API; questions
become input-required rounds or park a task (specs/mcp-2026-07-28.md, Part 4)."""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Awaitable, Callable, Coroutine
from typing import TYPE_CHECKING, Any, ClassVar

from .context import RequestContext
from .errors import McpError
from .jsonrpc import INTERNAL_ERROR, JsonObject
from .log_levels import LOG_LEVEL_RANK
from .peer import CallOptions
from .request_meta import TASKS_EXTENSION, RequestMeta, missing_capability_error
from .rounds import InputRequired, Rounds, check_capability
from .versions import Revision

if TYPE_CHECKING:
    from .server import ServerCore
    from .tasks import TaskRecord

_INPUT_METHODS = frozenset({"elicitation/create", "sampling/createMessage", "roots/list"})
_NO_META = RequestMeta("", {}, None, None, None)


class StatelessContext(RequestContext):
    """The context of one 2026-07-28 request."""

    __slots__ = ("_launching", "_task", "cache_hints", "request_meta", "rounds")
    revision: ClassVar[Revision] = Revision.STATELESS

    def __init__(self, *args: Any) -> None:
        super().__init__(*args)
        #: The request's validated envelope (set before the handler runs).
        self.request_meta: RequestMeta = _NO_META
        #: Input-required state, for the methods that may ask (tools/call, prompts/get,
        #: resources/read); None for the others.
        self.rounds: Rounds | None = None
        #: (ttlMs, cacheScope) the handler chose for its result, if any.
        self.cache_hints: tuple[int | None, str | None] | None = None
        self._task: TaskRecord | None = None
        self._launching = False

    @property
    def core(self) -> ServerCore:
        return self.session.core

    @property
    def principal(self) -> str | None:
        """Who is calling (a digest of the HTTP credential), when the transport knows."""
        return self.session.principal

    @property
    def client_capabilities(self) -> JsonObject:
        return self.request_meta.client_capabilities

    @property
    def round(self) -> int:
        return self.rounds.round if self.rounds is not None else 1

    @property
    def task_request(self) -> Any:
        return None  # a 2026-07-28 request has no `params.task` (see can_create_task)

    # -- notifications ---------------------------------------------------------------
    async def report_progress(
        self, progress: float, total: float | None = None, message: str | None = None
    ) -> None:
        if self._task is None:  # a task's request was answered long ago: nowhere to report
            await super().report_progress(progress, total, message)

    async def log(self, level: str, data: Any, logger: str | None = None) -> None:
        if LOG_LEVEL_RANK.get(level) is None:
            raise ValueError(f"unknown log level {level!r}")
        if self._task is not None or not self.request_meta.logs(level):
            return  # none without the request's logLevel, and none at all for tasks
        params: JsonObject = {"level": level, "data": data}
        if logger is not None:
            params["logger"] = logger
        self.notify("notifications/message", params)

    # -- input ----------------------------------------------------------------------
    async def request(
        self,
        method: str,
        params: JsonObject | None = None,
        timeout: float | CallOptions | None = None,
    ) -> JsonObject:
        if method in _INPUT_METHODS:
            return await self.ask(method, params or {}, None)
        raise McpError(
            INTERNAL_ERROR,
            f"Internal error: a 2026-07-28 server sends no requests to its client ({method})",
        )

    async def ask(
        self, method: str, params: JsonObject, timeout: float | None = None, key: str | None = None
    ) -> JsonObject:
        if method not in _INPUT_METHODS:
            return await self.request(method, params)
        if method == "elicitation/create" and "mode" not in params:
            params = {"mode": "form", **params}
        check_capability(self.request_meta, method, params)
        task = self._task
        if task is not None:
            key = task.unique_key(key or f"{method.split('/')[0]}-{len(task.questions) + 1}")
            answer: JsonObject = await task.ask(key, {"method": method, "params": params})
            return answer  # checked by TaskRecord.answer
        rounds = self.rounds
        if rounds is None:
            raise McpError(
                INTERNAL_ERROR,
                f"Internal error: {self.method} cannot ask the client for input "
                "(only tools/call, prompts/get and resources/read can)",
            )
        key = rounds.key_for(method, key)
        known = rounds.answer(key, method, params)
        if known is not None:
            return known
        rounds.ask(key, method, params)
        raise InputRequired(key)

    async def once(self, name: str, compute: Callable[[], Any]) -> Any:
        rounds = self.rounds
        if rounds is None:
            return await super().once(name, compute)
        known, value = rounds.memo(name)
        if known:
            return value
        value = compute()
        if inspect.isawaitable(value):
            value = await value
        rounds.remember(name, value)
        return value

    # -- tasks ----------------------------------------------------------------------
    @property
    def can_create_task(self) -> bool:
        return (
            self._task is None
            and self.method == "tools/call"
            and self.request_meta.supports_extension(TASKS_EXTENSION)
        )

    @property
    def in_task(self) -> bool:
        return self._task is not None

    async def start_task(self) -> None:
        if self._launching:
            await asyncio.sleep(0)  # a wait: the call becomes a task right here

    def run_as_task(
        self, work: Coroutine[Any, Any, JsonObject], *, required: bool = False
    ) -> Awaitable[JsonObject]:
        if self.can_create_task:
            return self._launch(work)
        if required:
            work.close()
            raise missing_capability_error({"extensions": {TASKS_EXTENSION: {}}})
        return work

    async def _launch(self, work: Coroutine[Any, Any, JsonObject]) -> JsonObject:
        """Run the call's first step; if it finished (or asked for input), that is the
        answer; if it is waiting for something, it becomes a task and the client gets
        the task handle. Refused (TooManyTasks) before it runs when the task caps are
        full of running tasks."""
        try:
            self.core.tasks.make_room(self.principal)
        except BaseException:
            work.close()
            raise
        runner = asyncio.get_running_loop().create_task(work)
        self._launching = True
        try:
            await asyncio.sleep(0)  # the runner's first step runs before we look
        except asyncio.CancelledError:
            runner.cancel()
            raise
        finally:
            self._launching = False
        if runner.done():
            return runner.result()
        return await self.adopt_task(runner)

    async def adopt_task(self, runner: asyncio.Task[JsonObject]) -> JsonObject:
        """The rest of this call runs as a task: `runner`, already running, is its work,
        and the client gets the task handle now. For a call that learns late that it is
        long (the gateway relaying a task its child made). Check `can_create_task` first."""
        try:
            record = self.core.tasks.create(self.principal)
        except BaseException:  # no room (or it went to another call meanwhile)
            runner.cancel()
            raise
        record.runner = runner
        self._task = record
        runner.add_done_callback(record.finished)
        await self.core.tasks.persist(record)
        return record.created_result()

    # -- caching --------------------------------------------------------------------
    def set_cache_hints(self, ttl_ms: int | None = None, scope: str | None = None) -> None:
        if ttl_ms is not None and (type(ttl_ms) is not int or ttl_ms < 0):
            raise ValueError("ttl_ms must be a non-negative integer")
        if scope is not None and scope not in ("public", "private"):
            raise ValueError('scope must be "public" or "private"')
        self.cache_hints = (ttl_ms, scope)


__all__ = ["StatelessContext"]
