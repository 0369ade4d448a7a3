"""A task a 2026-07-28 child made of a call, seen through for the front client; its id never
leaves the gateway (specs/gateway.md, "Relaying": Eras)."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from typing import Any, Final

from codex_mcp.codex_compat.repair import normalize_result
from codex_mcp.core.calls import CallOptions
from codex_mcp.core.context import RequestContext
from codex_mcp.core.errors import McpError
from codex_mcp.core.jsonrpc import INTERNAL_ERROR, JsonObject
from codex_mcp.core.stateless_context import StatelessContext

from ..children.child import Child
from ..children.connection import ChildSession
from .envelope import envelope
from .questions import answer

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


async def _follow(
    child: Child, session: ChildSession, ctx: RequestContext, task_id: str, task: JsonObject
) -> JsonObject:
    options = envelope(session, ctx, CallOptions(timeout=TASK_REQUEST_TIMEOUT), True)

    async def child_request(method: str, params: JsonObject) -> JsonObject:
        return await session.request(method, {"taskId": task_id, **params}, options)

    answered: set[str] = set()
    try:
        while True:
            status = task.get("status")
            if status == "completed":
                final = task.get("result")
                return normalize_result(final if isinstance(final, dict) else {"content": []})
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
        cancel = asyncio.get_running_loop().create_task(_cancel(child, child_request))
        _cancelling.add(cancel)
        cancel.add_done_callback(_cancelling.discard)
        raise
    if ctx.in_task:
        raise asyncio.CancelledError  # the child cancelled its task: so ends the gateway's
    raise McpError(INTERNAL_ERROR, f"Internal error: {child.name!r} cancelled the task")


#: tasks/cancel sent to children on their way (kept, so none is collected mid-flight).
_cancelling: set[asyncio.Task[None]] = set()


async def _cancel(child: Child, child_request: Any) -> None:
    with contextlib.suppress(Exception):
        await child_request("tasks/cancel", {})
        log.debug("%s: its task was cancelled, as the client's was", child.name)


def _failure(child: Child, error: Any) -> McpError:
    if isinstance(error, dict) and isinstance(error.get("code"), int):
        return McpError(error["code"], str(error.get("message", "")), error.get("data"))
    return McpError(INTERNAL_ERROR, f"Internal error: {child.name!r}'s task failed")
