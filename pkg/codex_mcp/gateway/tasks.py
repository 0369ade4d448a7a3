"""A task a 2026-07-28 child made of a call, seen through for the front client.

For a 2026-07-28 front that declared the tasks extension, the call becomes a task of the
gateway's own (`StatelessContext.adopt_task`): the front gets the gateway's task handle, made
and checked by the core's task store like any task of ours, so it is unguessable and bound
to the caller (another principal's `tasks/get`, `tasks/update` or `tasks/cancel` of it is
`unknown taskId`, as for any task). Its work follows the child's task: it polls the child's
`tasks/get` at the child's pollIntervalMs, asks the child's questions as its own (the
gateway's task waits in `input_required` until the front's `tasks/update`, which goes on to
the child's `tasks/update`), ends as the child's task ends (its result, its error, or
cancelled), and the front's `tasks/cancel` is the child's. The child's task id never leaves
the gateway: it is held here, by the work that follows it.

For any other front (Codex, a legacy client) the call itself waits for the child's task,
and its questions are asked on the call (`elicitation/create` to a legacy front), so the
front sees one request to its end.

A legacy child makes no tasks, but its call may need one: when it asks the front something
(`elicitation/create`, sampling, roots) while serving a 2026-07-28 front that declared
tasks, the call becomes the gateway's task there (`call_with_handoff`): the front gets the
handle, the question waits in the task's `input_required` for the front's `tasks/update`,
and the child's call goes on unbroken. (Without tasks the question is an input-required
round, which cancels the child's call and runs it again on the front's retry.)
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Coroutine
from typing import TYPE_CHECKING, Any, Final

from codex_mcp.core.calls import CallOptions
from codex_mcp.core.context import RequestContext
from codex_mcp.core.errors import McpError
from codex_mcp.core.jsonrpc import INTERNAL_ERROR, JsonObject
from codex_mcp.core.stateless_context import StatelessContext

from .repair import normalize_result

if TYPE_CHECKING:
    from .child import Child
    from .connection import ChildSession

log = logging.getLogger("codex_mcp.gateway")

#: Seconds each of our task requests to the child (tasks/get, update, cancel) may take.
TASK_REQUEST_TIMEOUT: Final = 30.0
#: Bounds on how often the child's task is polled (its pollIntervalMs, within these).
_MIN_POLL, _MAX_POLL = 0.05, 5.0


async def follow(
    child: Child, session: ChildSession, ctx: RequestContext, created: JsonObject
) -> JsonObject:
    """The front's answer to a call the child answered with a task (`created`)."""
    task_id = created.get("taskId")
    if not isinstance(task_id, str):
        raise McpError(
            INTERNAL_ERROR, f"Internal error: {child.name!r} made a task without a taskId"
        )
    work = _follow(child, session, ctx, task_id, created)
    if isinstance(ctx, StatelessContext) and ctx.can_create_task:
        return await ctx.adopt_task(asyncio.get_running_loop().create_task(work))
    return await work


class Handoff:
    """A call to a legacy child that becomes a task when the child first asks something."""

    __slots__ = ("adopted", "asked")

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        #: Set by the child's first question.
        self.asked: asyncio.Future[None] = loop.create_future()
        #: Set once the call is a task (None), or could not become one (the error).
        self.adopted: asyncio.Future[BaseException | None] = loop.create_future()


async def call_with_handoff(
    child: Child, call: Coroutine[Any, Any, JsonObject], ctx: StatelessContext
) -> JsonObject:
    """`call` (the relay of a tools/call to a legacy child) for a front that may get a task:
    its result, or, once the child asks the front something, the gateway's task handle,
    the call running on as the task's work."""
    inner = asyncio.ensure_future(call)
    handoff = Handoff(asyncio.get_running_loop())
    child.handoffs[ctx] = handoff
    try:
        try:
            await asyncio.wait((inner, handoff.asked), return_when=asyncio.FIRST_COMPLETED)
        except asyncio.CancelledError:
            inner.cancel()
            raise
        if inner.done():
            return inner.result()
        try:
            handle = await ctx.adopt_task(inner)
        except Exception as exc:  # no room for a task: the call fails, the question too
            handoff.adopted.set_result(exc)
            raise
        handoff.adopted.set_result(None)
        return handle
    finally:
        child.handoffs.pop(ctx, None)
        if not handoff.adopted.done():
            handoff.adopted.set_result(
                McpError(INTERNAL_ERROR, "Internal error: the call has ended")
            )


async def before_question(child: Child, call: RequestContext) -> None:
    """A legacy child is about to ask `call`'s client something: a call that may become a
    task becomes one first, so the question goes through the task."""
    handoff = child.handoffs.get(call)
    if handoff is None:
        return
    if not handoff.asked.done():
        handoff.asked.set_result(None)
    failed = await handoff.adopted
    if failed is not None:
        raise failed


async def _follow(
    child: Child, session: ChildSession, ctx: RequestContext, task_id: str, task: JsonObject
) -> JsonObject:
    from .modern_child import answer, envelope

    options = envelope(session, ctx, CallOptions(timeout=TASK_REQUEST_TIMEOUT), True)

    async def child_request(method: str, params: JsonObject) -> JsonObject:
        return await session.request(method, {"taskId": task_id, **params}, options)

    answered: set[str] = set()
    try:
        while True:
            status = task.get("status")
            if status == "completed":
                final = task.get("result")
                result: JsonObject = normalize_result(
                    final if isinstance(final, dict) else {"content": []}
                )
                return result
            if status == "failed":
                raise _failure(child, task.get("error"))
            if status == "cancelled":
                break
            waiting = task.get("inputRequests") if status == "input_required" else None
            fresh = {
                key: asked
                for key, asked in (waiting.items() if isinstance(waiting, dict) else ())
                if key not in answered
            }
            if fresh:
                responses = await answer(child, ctx, fresh)
                answered.update(fresh)
                await child_request("tasks/update", {"inputResponses": responses})
            else:
                interval = task.get("pollIntervalMs")
                seconds = interval / 1000 if isinstance(interval, int | float) else 0.5
                await asyncio.sleep(min(max(seconds, _MIN_POLL), _MAX_POLL))
            task = await child_request("tasks/get", {})
    except asyncio.CancelledError:
        # The front cancelled (its tasks/cancel, or its call): so does the child's task.
        _spawn(_cancel(child, child_request))
        raise
    if ctx.in_task:
        raise asyncio.CancelledError  # the child cancelled its task: so ends the gateway's
    raise McpError(INTERNAL_ERROR, f"Internal error: {child.name!r} cancelled the task")


#: tasks/cancel sent to children on their way (kept, so none is collected mid-flight).
_cancelling: set[asyncio.Task[None]] = set()


def _spawn(work: Coroutine[Any, Any, None]) -> None:
    task = asyncio.get_running_loop().create_task(work)
    _cancelling.add(task)
    task.add_done_callback(_cancelling.discard)


async def _cancel(child: Child, child_request: Any) -> None:
    with contextlib.suppress(Exception):
        await child_request("tasks/cancel", {})
        log.debug("%s: its task was cancelled, as the client's was", child.name)


def _failure(child: Child, error: Any) -> McpError:
    if isinstance(error, dict) and isinstance(error.get("code"), int):
        return McpError(error["code"], str(error.get("message", "")), error.get("data"))
    return McpError(INTERNAL_ERROR, f"Internal error: {child.name!r}'s task failed")
