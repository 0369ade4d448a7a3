"""Requests to a child that speaks 2026-07-28 only (connection.py found it so), on behalf of
one front request, whichever era the front speaks.

Each request carries the envelope, with the front's own capabilities (so the child asks
only what the front can answer); the tasks extension only when the front declared it, so
a tool that may run either way runs as a plain call for Codex (no polling between it and
its result). A tool that must run as a task (-32021 naming the extension) is asked again
with it, for a legacy front, and its task followed within the call. The child's
input-required rounds are answered by the front: a legacy front (Codex) is sent the
`elicitation/create` (sampling, roots) on its call's stream; a 2026-07-28 front gets the
question as its own input-required round, and on its retry the child is asked again, from
its first round, and the answers are at hand (the core's re-execution model, rounds.py);
inside a task of the gateway's the question parks that task. A task the child makes goes
to tasks.py. The child's `resultType` and server info stay behind: the core adds the
front's own.
"""

from __future__ import annotations

import asyncio
import dataclasses
from typing import TYPE_CHECKING, Any

from codex_mcp.client.stateless import MAX_ROUNDS
from codex_mcp.core.calls import CallOptions
from codex_mcp.core.context import RequestContext
from codex_mcp.core.errors import McpError
from codex_mcp.core.jsonrpc import INTERNAL_ERROR, JsonObject
from codex_mcp.core.peer import JsonRpcPeer
from codex_mcp.core.request_meta import (
    CLIENT_CAPABILITIES_KEY,
    MISSING_REQUIRED_CLIENT_CAPABILITY,
    RESULT_COMPLETE,
    RESULT_INPUT_REQUIRED,
    RESULT_TASK,
    SERVER_INFO_KEY,
    TASKS_EXTENSION,
)
from codex_mcp.core.session import CLIENT_CAPABILITY_FOR

if TYPE_CHECKING:
    from .child import Child
    from .connection import ChildSession


def front_has_tasks(ctx: RequestContext) -> bool:
    """Whether the front request declared the tasks extension (a 2026-07-28 one)."""
    meta = getattr(ctx, "request_meta", None)
    return meta is not None and bool(meta.supports_extension(TASKS_EXTENSION))


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


def envelope(
    session: ChildSession, ctx: RequestContext, options: CallOptions, tasks: bool
) -> CallOptions:
    """`options` with the child's 2026-07-28 envelope: the front's capabilities, with the
    tasks extension or without it."""
    era = session.stateless
    assert era is not None
    capabilities = {**ctx.client_capabilities}
    extensions = capabilities.get("extensions")
    extensions = dict(extensions) if isinstance(extensions, dict) else {}
    if tasks:
        extensions[TASKS_EXTENSION] = {}
    else:
        extensions.pop(TASKS_EXTENSION, None)
    capabilities["extensions"] = extensions
    meta = {**(options.meta or {}), CLIENT_CAPABILITIES_KEY: capabilities}
    stamped = dataclasses.replace(options, meta=meta)
    return era.stamp(stamped, session.transport.cancels_by_notification)


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
                from .tasks import follow

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


async def answer(child: Child, ctx: RequestContext, asked: JsonObject) -> JsonObject:
    """The front's answers to the child's input requests, all asked at once, each under the
    child's own key (a 2026-07-28 front sees the same keys)."""
    keys = list(asked)
    answers = await asyncio.gather(*(ask(child, ctx, key, asked[key]) for key in keys))
    return dict(zip(keys, answers, strict=True))


async def ask(child: Child, ctx: RequestContext, key: str, request: Any) -> JsonObject:
    method = request.get("method") if isinstance(request, dict) else None
    params = request.get("params") if isinstance(request, dict) else None
    if method not in CLIENT_CAPABILITY_FOR:
        raise McpError(
            INTERNAL_ERROR,
            f"Internal error: {child.name!r} asked for {method!r}, which no client answers",
        )
    from .relay import check_client_can

    if getattr(ctx, "request_meta", None) is None:  # a legacy front: its session declared
        check_client_can(child, method, ctx.client_capabilities)
    return await ctx.ask(method, params if isinstance(params, dict) else {}, key=key)


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
