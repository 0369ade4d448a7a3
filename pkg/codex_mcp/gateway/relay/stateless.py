"""Requests to a child that speaks 2026-07-28 only, for one front request of either revision
(specs/gateway.md, "Relaying": Eras)."""

from __future__ import annotations

import dataclasses

from codex_mcp.client.stateless import MAX_ROUNDS
from codex_mcp.core.calls import CallOptions
from codex_mcp.core.context import RequestContext
from codex_mcp.core.errors import McpError
from codex_mcp.core.jsonrpc import INTERNAL_ERROR, JsonObject
from codex_mcp.core.peer import JsonRpcPeer
from codex_mcp.core.request_meta import (
    MISSING_REQUIRED_CLIENT_CAPABILITY,
    RESULT_COMPLETE,
    RESULT_INPUT_REQUIRED,
    RESULT_TASK,
    SERVER_INFO_KEY,
    TASKS_EXTENSION,
)

from ..children.child import Child
from ..children.connection import ChildSession
from .envelope import envelope, front_has_tasks
from .questions import answer
from .tasks import follow


def needs_tasks(exc: Exception, ctx: RequestContext) -> bool:
    """The child refused a call without the tasks extension (-32021 naming it), for a
    legacy front, whose call can wait for the task. (A 2026-07-28 front without tasks
    answers questions only by re-running its call, which would start the task again.)"""
    if not isinstance(exc, McpError) or exc.code != MISSING_REQUIRED_CLIENT_CAPABILITY:
        return False
    required = exc.data.get("requiredCapabilities") if isinstance(exc.data, dict) else None
    extensions = required.get("extensions") if isinstance(required, dict) else None
    return (
        isinstance(extensions, dict)
        and TASKS_EXTENSION in extensions
        and (getattr(ctx, "request_meta", None) is None)
    )


async def request(
    child: Child,
    session: ChildSession,
    method: str,
    params: JsonObject,
    options: CallOptions,
    ctx: RequestContext,
) -> JsonObject:
    """`method` on the 2026-07-28 child until its result is complete: its rounds answered by
    the front, its task followed (tasks.py). `options.request_id` is in `child.calls` (the
    caller takes it out); each retry goes under a new id, there while it runs."""
    with_tasks = front_has_tasks(ctx)
    stamped = envelope(session, ctx, options, with_tasks)
    retry = params
    try:
        for _ in range(MAX_ROUNDS):
            try:
                result = await JsonRpcPeer.request(session, method, retry, stamped)
            except McpError as exc:
                if with_tasks or not needs_tasks(exc, ctx):
                    raise
                with_tasks = True
                stamped = envelope(session, ctx, _renewed(child, session, stamped), True)
                result = await JsonRpcPeer.request(session, method, retry, stamped)
            kind = result.get("resultType", RESULT_COMPLETE)
            if kind == RESULT_TASK:
                return await follow(child, session, ctx, result)
            if kind != RESULT_INPUT_REQUIRED:
                return plain(result)
            retry = {k: v for k, v in params.items() if k not in ("inputResponses", "requestState")}
            asked = result.get("inputRequests")
            if isinstance(asked, dict) and asked:
                retry["inputResponses"] = await answer(child, ctx, asked)
            state = result.get("requestState")
            if isinstance(state, str):
                retry["requestState"] = state
            stamped = _renewed(child, session, stamped)
    finally:
        if stamped.request_id != options.request_id:
            child.calls.pop(stamped.request_id, None)
    raise McpError(
        INTERNAL_ERROR,
        f"Internal error: {child.name!r} still asked for input after {MAX_ROUNDS} rounds",
    )


def _renewed(child: Child, session: ChildSession, options: CallOptions) -> CallOptions:
    """`options` under a new request id, in `child.calls` instead of the old one (a request
    is sent once per id)."""
    request_id = session.new_request_id()
    ctx = child.calls.pop(options.request_id, None)
    if ctx is not None:
        child.calls[request_id] = ctx
    return dataclasses.replace(options, request_id=request_id)


def plain(result: JsonObject) -> JsonObject:
    """The child's complete result without what the 2026-07-28 era adds to it."""
    if "resultType" not in result and "_meta" not in result:
        return result
    plain = {k: v for k, v in result.items() if k != "resultType"}
    meta = plain.get("_meta")
    if isinstance(meta, dict) and SERVER_INFO_KEY in meta:
        rest = {k: v for k, v in meta.items() if k != SERVER_INFO_KEY}
        if rest:
            plain["_meta"] = rest
        else:
            del plain["_meta"]
    return plain
