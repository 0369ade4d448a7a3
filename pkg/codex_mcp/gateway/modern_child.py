"""Requests to a child that speaks 2026-07-28 only (connection.py found it so), on behalf of
one front request, whichever era the front speaks.

Each request carries the envelope, with the front's own capabilities (so the child asks
only what the front can answer) and the tasks extension when the gateway can follow a task
for this front (every front but a 2026-07-28 one that did not declare it). The child's
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

from codex_mcp.client.modern import MAX_ROUNDS
from codex_mcp.core.calls import CallOptions
from codex_mcp.core.context import RequestContext
from codex_mcp.core.jsonrpc import INTERNAL_ERROR, JsonObject, JsonRpcError
from codex_mcp.core.peer import JsonRpcPeer
from codex_mcp.core.request_meta import (
    CLIENT_CAPABILITIES_KEY,
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


def follows_tasks(ctx: RequestContext) -> bool:
    """Whether the gateway can see a child's task through for this front request: adopted
    as its own for a 2026-07-28 front that declared tasks, followed within the call for a
    legacy one. A 2026-07-28 front without tasks answers questions only by re-running its
    call, which would start the child's task again: the child is told no tasks then."""
    meta = getattr(ctx, "request_meta", None)
    return meta is None or bool(meta.supports_extension(TASKS_EXTENSION))


def envelope(session: ChildSession, ctx: RequestContext, options: CallOptions) -> CallOptions:
    """`options` with the child's 2026-07-28 envelope: the front's capabilities, and the
    tasks extension when the gateway follows tasks for this front."""
    era = session.modern
    assert era is not None
    capabilities = {**ctx.client_capabilities}
    extensions = capabilities.get("extensions")
    extensions = dict(extensions) if isinstance(extensions, dict) else {}
    if follows_tasks(ctx):
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
    the front, its task followed (tasks.py). `options.request_id` is in `child.calls`;
    each retry goes under a new id, registered there too while it runs."""
    options = envelope(session, ctx, options)
    retry = params
    for _ in range(MAX_ROUNDS):
        result = await JsonRpcPeer.request(session, method, retry, options)
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
        request_id = session.new_request_id()
        child.calls.pop(options.request_id, None)
        child.calls[request_id] = ctx
        options = dataclasses.replace(options, request_id=request_id)
    raise JsonRpcError(
        INTERNAL_ERROR,
        f"Internal error: {child.name!r} still asked for input after {MAX_ROUNDS} rounds",
    )


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
        raise JsonRpcError(
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
