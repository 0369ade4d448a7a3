"""2025-11-25 tasks through the gateway, an extension of its core (core/extensions.py): `tasks`
declared to a front that negotiated 2025-11-25 while a child offers them, the task methods,
and a task-augmented `tools/call` taken where calls are routed (under the policy, inside
observation), relayed to the tool's child whose task the front holds under a handle of ours
(task_handles.py); and a task-required tool called without a task, whose task the gateway
follows to its end (specs/gateway.md, "Relaying": Tasks of 2025-11-25)."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Hashable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final, Protocol

from codex_mcp.codex_compat.repair import normalize_result
from codex_mcp.core.calls import PROGRESS, CallOptions, ProgressCallback
from codex_mcp.core.context import RequestContext
from codex_mcp.core.errors import McpError
from codex_mcp.core.extensions import CallTool, Extension
from codex_mcp.core.jsonrpc import (
    INTERNAL_ERROR,
    INVALID_PARAMS,
    METHOD_NOT_FOUND,
    JsonObject,
    invalid_params,
)
from codex_mcp.core.methods.pagination import paginate
from codex_mcp.core.peer import MethodEntry
from codex_mcp.core.provider import UnknownTool
from codex_mcp.core.ready import Ready
from codex_mcp.core.versions import V2025_11_25
from codex_mcp.observe.hooks import RelayObserver

from ..children.channel import TASK_REQUEST_TIMEOUT
from ..children.child import Child, declares_tasks, task_support
from ..children.connection import Connection
from ..children.inflight import RELATED_TASK, InFlight
from ..config.model import GatewayConfig
from . import calls as relay
from .front import FrontCall
from .task_handles import Handle, TaskHandles, is_ms

if TYPE_CHECKING:
    from codex_mcp.core.server import ServerCore
    from codex_mcp.core.session import ServerSession

log = logging.getLogger("codex_mcp.gateway")

TASK_STATUS: Final = "notifications/tasks/status"
#: What the gateway declares when a child offers tasks: tools/call, tasks/list, tasks/cancel.
CAPABILITY: Final[JsonObject] = {"list": {}, "cancel": {}, "requests": {"tools": {"call": {}}}}
#: The one answer to an id this session does not hold: unknown, ended, or another's.
NOT_FOUND: Final = "Failed to retrieve task: Task not found"
#: Where a session keeps whether it was told of tasks.
_TOLD = "codex_mcp.gateway.front_tasks.told"


class Routes(Protocol):
    """A catalog (routing/catalog.py, above the relay) as the task relay reads it."""

    @property
    def routes(self) -> Mapping[str, tuple[Child, str]]: ...


class Gateway(Protocol):
    """What the task relay needs of the gateway (provider.py)."""

    config: GatewayConfig
    relay_observer: RelayObserver | None

    def catalog(self, session: ServerSession) -> Routes: ...
    def children(self, session: ServerSession, *, start: bool = True) -> list[Child]: ...
    def spawn(self, work: Awaitable[Any]) -> None: ...


@dataclass(eq=False, slots=True)
class ProgressRoute:
    """Where a child's progress for one task-augmented call goes: its front request's
    token, to that request's client, for as long as the task lasts (2025-11-25: the token
    stays valid until the task ends), not only while the call is in flight. Kept in the
    in-flight table of the connection the call was made on (decision 73)."""

    ctx: RequestContext
    #: The call that made the task is still in flight (its stream carries the progress).
    in_call: bool = True
    #: The front's task, once created (None: not yet, or a task the gateway follows).
    handle: Handle | None = None


def _now() -> float:
    return asyncio.get_running_loop().time()


class FrontTasks(Extension):
    """The gateway's 2025-11-25 tasks, and the methods that serve them."""

    def __init__(self, gateway: Gateway) -> None:
        self.gateway = gateway
        self.handles = TaskHandles(self._released)
        #: Servers one of whose children declared tasks (a shared one may be down now).
        self._seen: set[str] = set()
        self._core: ServerCore | None = None
        #: A session was told of tasks: tools/call takes `params.task` from then on.
        self._told = False
        #: Task-augmented calls in flight, per connection, and what wakes whoever waits for
        #: one of them to end (front_params).
        self._creating: dict[InFlight, int] = {}
        self._changed = asyncio.Event()

    # -- the extension ------------------------------------------------------------------
    def install(self, core: ServerCore) -> None:
        self._core = core
        core.extend(self)

    def methods(self) -> dict[str, MethodEntry]:
        return {
            "tasks/get": MethodEntry(self.get_task),
            "tasks/result": MethodEntry(self.task_result),
            "tasks/cancel": MethodEntry(self.cancel_task),
            "tasks/list": MethodEntry(self.list_tasks),
        }

    def initialize(
        self, session: ServerSession, params: JsonObject, result: JsonObject
    ) -> JsonObject:
        if result.get("protocolVersion") != V2025_11_25 or not self.offered(session):
            return result
        session.state[_TOLD] = True
        session.cleanup.callback(self._session_ended, session)
        if not self._told and self._core is not None:
            self._told = True
            self._core.refold()  # tools/call takes `params.task` from now on (call_tool)
        capabilities = {**result.get("capabilities", {}), "tasks": CAPABILITY}
        return {**result, "capabilities": capabilities}

    def call_tool(self, call_next: CallTool) -> CallTool:
        if not self._told:  # no session told of tasks yet: the plain path
            return call_next
        create = self.create

        def tasks_or_plain(name: str, arguments: JsonObject, ctx: RequestContext) -> Any:
            requested = ctx.task_request
            if requested is not None and ctx.session.state.get(_TOLD):
                return create(name, arguments, requested, ctx)
            return call_next(name, arguments, ctx)

        return tasks_or_plain

    def offered(self, session: ServerSession) -> bool:
        """Does a child of this session offer task-augmented tools/call (or may it: one not
        up yet listing tools that run as tasks in its kept listing, or a per-session one,
        which starts with the session's first listing)?"""
        for child in self.gateway.children(session, start=False):
            connection = child.connection
            if connection is not None:
                if declares_tasks(connection.capabilities):
                    self._seen.add(child.name)
                    return True
            elif child.name in self._seen or any(
                task_support(entry.definition) in ("optional", "required")
                for entry in child.current_tools
            ):
                return True
        return any(server.per_session for server in self.gateway.config.enabled_servers)

    # -- a task-augmented tools/call ------------------------------------------------
    async def create(
        self, name: str, arguments: JsonObject, requested: Any, ctx: RequestContext
    ) -> JsonObject:
        """The front's task-augmented call (`requested`: its `params.task`): relayed as one
        to the tool's child, whose CreateTaskResult comes back under an id of ours."""
        session = ctx.session
        task = _task_params(requested)
        child, tool = await self._route(name, ctx)
        if self.gateway.relay_observer is not None:  # as any relayed call (observe/hooks.py)
            self.gateway.relay_observer.on_relay(child.name, tool, ctx)
        connection = await child.connection_for(False)  # a 2025-11-25 task: its own session
        found = (entry.definition for entry in child.current_tools if entry.name == tool)
        support = task_support(next(found, None))
        if connection is None or not declares_tasks(connection.capabilities):
            support = None
        if connection is None or support not in ("optional", "required"):
            raise McpError(METHOD_NOT_FOUND, f"Tool {name} does not support task-augmented calls")
        self.handles.make_room(session, _now())
        inflight = connection.inflight
        self._creating[inflight] = self._creating.get(inflight, 0) + 1
        routed: list[tuple[InFlight, Hashable, ProgressRoute]] = []
        try:
            created = await relay.request(
                child,
                "tools/call",
                {"name": tool, "arguments": arguments, "task": task},
                ctx,
                tool,
                progress_route=self._progress_route(ctx, routed),
                on=connection,
            )
            token = routed[0][1] if routed else None
            handle, answer = self._created(session, child, connection, tool, created, token)
            if routed:
                routed[0][2].handle = handle
            return answer
        finally:
            self._unroute(routed, keep_tasks=True)
            left = self._creating.pop(inflight) - 1
            if left:
                self._creating[inflight] = left
            self._changed.set()  # the waiters look again (a handle, or nothing to wait for)
            self._changed = asyncio.Event()

    def _created(
        self,
        session: ServerSession,
        child: Child,
        connection: Connection,
        tool: str,
        created: JsonObject,
        progress_token: Hashable,
    ) -> tuple[Handle, JsonObject]:
        """The child's CreateTaskResult, held under a handle of ours."""
        made = created.get("task")
        if not isinstance(made, dict) or not isinstance(made.get("taskId"), str):
            raise McpError(
                INTERNAL_ERROR, f"Internal error: {child.name!r} answered a task without a taskId"
            )
        handle = Handle(session, child, connection, made["taskId"], tool, progress_token)
        try:
            if session.closed:  # nobody left to hold it
                raise McpError(INTERNAL_ERROR, "session closed")
            self.handles.make_room(session, _now())
        except McpError:
            self._cancel_at_child(child, connection, handle.child_id)
            raise
        self.handles.hold(handle)
        connection.inflight.open_tasks += 1  # not idle while it runs (_released)
        self._seen.add(child.name)
        return handle, {**_related(created, handle.front_id), "task": self._saw(handle, made)}

    async def _route(self, name: str, ctx: RequestContext) -> tuple[Child, str]:
        route = self.gateway.catalog(ctx.session).routes.get(name)
        if route is None:  # not listed yet (a child starting): list once, as a call does
            await ctx.session.core.provider.list_tools(ctx)
            route = self.gateway.catalog(ctx.session).routes.get(name)
        if route is None:
            raise UnknownTool(name)
        return route

    # -- the front's tasks/* --------------------------------------------------------
    def _own(self, session: ServerSession, params: JsonObject) -> Handle:
        """The handle `params.taskId` names, when this session holds it; any other id gets
        the one answer an unknown id gets (whose it is is not told)."""
        if not session.state.get(_TOLD):
            raise McpError(METHOD_NOT_FOUND, "Method not found: tasks are not offered")
        task_id = params.get("taskId")
        if type(task_id) is not str:
            raise invalid_params("'taskId' must be a string")
        handle = self.handles.mine(session, task_id, _now())
        if handle is None:
            raise McpError(INVALID_PARAMS, NOT_FOUND)
        return handle

    async def get_task(
        self, session: ServerSession, params: JsonObject, ctx: RequestContext
    ) -> JsonObject:
        handle = self._own(session, params)
        if not handle.ended and _gone(handle):
            self._lost(handle)
        if handle.ended:  # what the child said last (or that it is lost): no more changes
            return dict(handle.task)
        return self._saw(handle, await self._ask(handle, "tasks/get", FrontCall.of(ctx)))

    async def task_result(
        self, session: ServerSession, params: JsonObject, ctx: RequestContext
    ) -> JsonObject:
        """The task's result once it ends (the child's tasks/result waits for that); what
        the child asks meanwhile (input_required) reaches this request's client."""
        handle = self._own(session, params)
        front = FrontCall.of(ctx)
        waiting = handle.where.inflight.tasks
        waiting[handle.child_id] = front
        try:
            result = await self._ask(handle, "tasks/result", front, result=True)
        finally:
            if waiting.get(handle.child_id) is front:
                del waiting[handle.child_id]
        self.handles.end(handle, _now())  # it has ended: tasks/result answers only then
        return normalize_result(_related(result, handle.front_id))

    async def cancel_task(
        self, session: ServerSession, params: JsonObject, ctx: RequestContext
    ) -> JsonObject:
        handle = self._own(session, params)
        return self._saw(handle, await self._ask(handle, "tasks/cancel", FrontCall.of(ctx)))

    def list_tasks(self, session: ServerSession, params: JsonObject, ctx: RequestContext) -> Any:
        """This session's tasks as last seen (tasks/get asks the child for the current)."""
        if not session.state.get(_TOLD):
            raise McpError(METHOD_NOT_FOUND, "Method not found: tasks are not offered")
        tasks = [dict(handle.task) for handle in self.handles.of_session(session, _now())]
        return Ready(paginate(tasks, params, session.core.page_size, "tasks"))

    async def _ask(
        self, handle: Handle, method: str, front: FrontCall, *, result: bool = False
    ) -> JsonObject:
        """`method` about the handle's task, on the connection it lives on."""
        if _gone(handle):
            self._lost(handle)
            raise McpError(
                INTERNAL_ERROR,
                f"Internal error: the server {handle.child.name!r} stopped, and its task with it",
            )
        answer = await relay.request(
            handle.child,
            method,
            {"taskId": handle.child_id},
            front,
            handle.tool if result else None,
            on=handle.where,
        )
        if handle.front_id not in self.handles.by_id:  # dropped meanwhile (session closed)
            raise McpError(INVALID_PARAMS, NOT_FOUND)
        return answer

    # -- what the handle table lets go ----------------------------------------------------
    def _saw(self, handle: Handle, task: JsonObject) -> JsonObject:
        return self.handles.saw(handle, task, _now())

    def _lost(self, handle: Handle) -> None:
        lost = f"the server {handle.child.name!r} stopped; the task is lost"
        self.handles.end(handle, _now(), lost)

    def _released(self, handle: Handle) -> None:
        """A handle's task ended (or it was dropped first): its child may idle again, and its
        token names nothing any more."""
        inflight: InFlight = handle.where.inflight
        inflight.open_tasks -= 1
        routes = inflight.progress
        entry = routes.get(handle.progress_token) if handle.progress_token is not None else None
        if entry is not None and entry.handle is handle:
            del routes[handle.progress_token]

    def _session_ended(self, session: ServerSession) -> None:
        """A closed session's tasks: forgotten, and those still running cancelled at their
        child (nobody can reach them any more)."""
        for handle in self.handles.session_ended(session):
            self._cancel_at_child(handle.child, handle.where, handle.child_id)

    def _cancel_at_child(self, child: Child, where: Connection, child_id: str) -> None:
        session = where.session
        if session.closed:
            return

        async def cancel() -> None:
            options = CallOptions(TASK_REQUEST_TIMEOUT)
            with contextlib.suppress(Exception):
                await session.request("tasks/cancel", {"taskId": child_id}, options)
                log.debug("%s: its task was cancelled, as its client is gone", child.name)

        self.gateway.spawn(cancel())

    # -- progress ------------------------------------------------------------------------
    def _progress_route(
        self, ctx: RequestContext, routed: list[tuple[InFlight, Hashable, ProgressRoute]]
    ) -> relay.ProgressRoute:
        """What routes the progress of the child call made for `ctx` (relay.request tells it
        the connection and token used): `child_progress` relays all of it, in the call and
        after."""

        def route(connection: Connection, token: Hashable) -> ProgressCallback:
            entry = ProgressRoute(ctx)
            connection.inflight.progress[token] = entry
            routed.append((connection.inflight, token, entry))
            return _heard_in_child_progress

        return route

    def _unroute(
        self, routed: list[tuple[InFlight, Hashable, ProgressRoute]], *, keep_tasks: bool = False
    ) -> None:
        """The call is answered: its route goes, or (a front's task not ended) lives on, out
        of the call."""
        for inflight, token, entry in routed:
            entry.in_call = False
            handle = entry.handle
            if keep_tasks and handle is not None and not handle.ended:
                continue
            if inflight.progress.get(token) is entry:
                del inflight.progress[token]

    def child_progress(self, inflight: InFlight, params: JsonObject) -> None:
        """notifications/progress from a child: a task's (or a call's, in flight) goes to
        the front request that asked for it, under its token; any other token (made up,
        another child's, an ended task's, of a wrong type) reaches nobody."""
        routes = inflight.progress
        if not routes:
            return
        token = params.get("progressToken")
        if type(token) is not int and type(token) is not str:  # True == 1 must not match 1
            return
        entry = routes.get(token)
        if entry is None:
            return
        handle = entry.handle
        ctx = entry.ctx
        if handle is not None and (handle.ended or handle.front_id not in self.handles.by_id):
            del routes[token]
            return
        if handle is None and (ctx.cancelled or ctx.in_task):
            return  # a followed task's call that is gone, or answered as a task of ours
        front = {**params, "progressToken": ctx.progress_token}
        # Out of its call, on the session's own stream (the call's id may be reused).
        ctx.peer.notify(PROGRESS, front, ctx.request_id if entry.in_call else None)

    # -- what the child says ----------------------------------------------------------
    def child_status(self, child: Child, inflight: InFlight, params: JsonObject) -> None:
        """notifications/tasks/status from a child: to the session that holds the task,
        under our id; nobody else hears of it."""
        child_id = params.get("taskId")
        handle = self.handles.of_child(inflight, child_id)
        if handle is None:
            log.debug("%s: a status of a task no session holds; dropped", child.name)
            return
        task = self._saw(handle, params)
        session = handle.session
        if not session.closed:
            session.notify(TASK_STATUS, task)

    async def front_params(self, inflight: InFlight, params: JsonObject) -> JsonObject:
        """A child's request to the client, its related-task `_meta` naming our id (the
        child's never leaves the gateway: a task the gateway follows has none to name). A
        child may ask before its CreateTaskResult is read: while a task-augmented call to it
        is in flight, an id not known yet is waited for (bounded)."""
        meta = params.get("_meta")
        related = meta.get(RELATED_TASK) if isinstance(meta, dict) else None
        if related is None:
            return params
        task_id = related.get("taskId") if isinstance(related, dict) else None
        handle = self.handles.of_child(inflight, task_id)
        if handle is None and isinstance(task_id, str) and self._creating.get(inflight):
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(TASK_REQUEST_TIMEOUT):
                    while handle is None and self._creating.get(inflight):
                        await self._changed.wait()
                        handle = self.handles.of_child(inflight, task_id)
        return _related(params, handle.front_id if handle is not None else None)

    # -- a task-required tool called without a task -------------------------------------
    async def follow(
        self, child: Child, tool: str, arguments: JsonObject, ctx: RequestContext
    ) -> JsonObject:
        """A call of a tool the child runs only as a task, from a front that did not make it
        one (Codex; a 2026-07-28 front): the gateway makes the task, waits for its end
        (tasks/result), and answers the call with its result. A 2026-07-28 front that
        declared tasks gets the gateway's own task for it (FrontCall.adopt)."""
        front = FrontCall.of(ctx)
        return await front.adopt(self._follow(child, tool, arguments, front))

    async def _follow(
        self, child: Child, tool: str, arguments: JsonObject, front: FrontCall
    ) -> JsonObject:
        params = {"name": tool, "arguments": arguments}
        connection = await child.connection_for(False)  # a 2025-11-25 task: its own session
        if connection is None or not declares_tasks(connection.capabilities):
            return await relay.request(child, "tools/call", params, front, tool)
        self._seen.add(child.name)
        routed: list[tuple[InFlight, Hashable, ProgressRoute]] = []
        try:
            created = await relay.request(
                child,
                "tools/call",
                {**params, "task": {}},
                front,
                tool,
                progress_route=self._progress_route(front.ctx, routed),
                on=connection,
            )
            made = created.get("task")
            if not isinstance(made, dict) or not isinstance(made.get("taskId"), str):
                return created  # it ran the call as a plain one after all
            child_id = made["taskId"]
            waiting = connection.inflight.tasks
            waiting[child_id] = front
            try:
                result = await relay.request(
                    child, "tasks/result", {"taskId": child_id}, front, tool, on=connection
                )
            except asyncio.CancelledError:  # the front cancelled its call: so ends the task
                self._cancel_at_child(child, connection, child_id)
                raise
            finally:
                if waiting.get(child_id) is front:
                    del waiting[child_id]
            return normalize_result(_related(result, None))
        finally:  # the task's progress went to the call, while it lasted
            self._unroute(routed)


def _heard_in_child_progress(params: JsonObject) -> None:
    """A routed call's progress while it is in flight: `child_progress` relays it, as it
    does after (so each is relayed once, in the order the child sent them)."""


def _gone(handle: Handle) -> bool:
    """Has the connection the task lived on ended (the child stopped or restarted)?"""
    return handle.where.session.closed or handle.child.connection is not handle.where


def _task_params(task: Any) -> JsonObject:
    """The front's `params.task`, checked: an object, whose `ttl` (if any) is a
    non-negative number of milliseconds; what the child is sent is only that."""
    if type(task) is not dict:
        raise invalid_params("'task' must be an object")
    ttl = task.get("ttl")
    if ttl is None:
        return {}
    if not is_ms(ttl):
        raise invalid_params("'task.ttl' must be a non-negative number of milliseconds (or null)")
    return {"ttl": ttl}


def _related(message: JsonObject, front_id: str | None) -> JsonObject:
    """`message` with its related-task `_meta` naming our id instead of the child's (None:
    without it, as a plain call's: the child's task id stays in the gateway)."""
    meta = message.get("_meta")
    if not isinstance(meta, dict) or RELATED_TASK not in meta:
        return message
    rest = {key: value for key, value in meta.items() if key != RELATED_TASK}
    if front_id is not None:
        rest[RELATED_TASK] = {"taskId": front_id}
    out = {key: value for key, value in message.items() if key != "_meta"}
    return {**out, "_meta": rest} if rest else out
