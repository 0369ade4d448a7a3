"""Requests relayed to a child, each tied to the front request that caused it (specs/gateway.md,
"Relaying")."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Hashable
from typing import Any

from codex_mcp.client.errors import McpClientError
from codex_mcp.client.session import ClientSession
from codex_mcp.codex_compat.repair import normalize_result
from codex_mcp.core.calls import PROGRESS, CallOptions, ProgressCallback
from codex_mcp.core.context import RequestContext
from codex_mcp.core.deferred import Deferred
from codex_mcp.core.errors import McpError
from codex_mcp.core.jsonrpc import JsonObject
from codex_mcp.core.request_meta import ENVELOPE_KEYS

from ..children import revision
from ..children.child import Child
from ..errors import crashed_error, login_command, normalize_exception, raised_by_child
from . import stateless
from .attribution import note_caller
from .questions import call_with_handoff

#: Told the child and the progress token of a request to it; returns what its pending
#: request does with the progress (the route relays it).
ProgressRoute = Callable[[Child, Hashable], ProgressCallback]


def call_tool(
    child: Child, tool: str, arguments: JsonObject, ctx: RequestContext, passthrough: bool
) -> Awaitable[JsonObject]:
    """tools/call on the child. The hot path (a stdio child that is up, no per-call timeout)
    sends at once and answers the front request from the child's answer as it is read: no
    task, no future, no loop turn between (core/deferred.py), one `RelayedCall` per call."""
    child.activity += 1
    connection = child.connection
    legacy_front = type(ctx) is RequestContext  # no 2026-07-28 envelope: no task, no rounds
    if not legacy_front or ctx.peer is not child.caller:
        note_caller(child, ctx)
    params = {"name": tool, "arguments": arguments}
    if (
        not legacy_front
        and ctx.can_create_task
        and (connection is None or connection.session.stateless is None)
    ):
        # A 2026-07-28 front that declared tasks: a question from the child makes it one.
        work = request(child, "tools/call", params, ctx, passthrough, tool)
        return call_with_handoff(work, ctx)  # type: ignore[arg-type]
    if not legacy_front and revision.may_speak_stateless(child):
        # A 2026-07-28 front, and a child that may speak it too: asked in 2026-07-28.
        return request(child, "tools/call", params, ctx, passthrough, tool)
    if (
        connection is None
        or not connection.direct  # held: pinning has not compared its tools yet
        or child.call_timeout is not None
        or not child.is_stdio
    ):
        return request(child, "tools/call", params, ctx, passthrough, tool)
    session = connection.session
    if session.stateless is not None:  # 2026-07-28 only: rounds and tasks to see through
        return request(child, "tools/call", params, ctx, passthrough, tool)
    call = RelayedCall(child, session, tool, ctx, passthrough)
    meta = ctx.meta
    options = None
    if meta is not None:  # its progress token becomes ours; the rest of _meta goes along
        token = meta.get("progressToken")
        if token is not None:
            call.on_progress = _progress_relay(ctx)
        options = CallOptions(on_progress=call.on_progress, meta=_forwarded_meta(meta))
    try:
        request_id = session.request_for(call, params, options)
    except McpClientError as exc:
        if not raised_by_child(exc):
            raise
        raise _error(child, exc, tool, passthrough) from None
    # The answer cannot come before this: the request is written in a later loop turn.
    call.request_id = request_id
    child.calls[request_id] = ctx
    if not legacy_front and getattr(ctx, "rounds", None) is not None:
        child.interrupts[request_id] = call.abort  # a 2026-07-28 call that may need a round
    return call


class RelayedCall(Deferred):
    """One tools/call relayed on the hot path, all in one object: the front request's
    answer (a Deferred the core answers from), what waits for the child's answer (the
    client session's `Waiter`), and what cancelling it does to the child's call."""

    __slots__ = ("child", "ctx", "on_progress", "passthrough", "request_id", "session", "tool")

    #: As a Waiter: the child's method, and never settled before its answer (a cancelled
    #: call is taken off the session's list at once).
    method = "tools/call"
    settled = False

    def __init__(
        self,
        child: Child,
        session: ClientSession,
        tool: str,
        ctx: RequestContext,
        passthrough: bool,
    ) -> None:
        # Deferred.__init__, inline (one call less per relayed call).
        self._settle = self._outcome = self._finished = self.on_cancel = None
        self.cancelled = False
        self.child = child
        self.session = session
        self.tool = tool
        self.ctx = ctx
        self.passthrough = passthrough
        self.request_id: Any = None
        self.on_progress: ProgressCallback | None = None

    def succeed(self, result: JsonObject) -> None:
        """The child answered: answer the front request."""
        child = self.child
        child.calls.pop(self.request_id, None)
        if child.interrupts:
            child.interrupts.pop(self.request_id, None)
        if "is_error" in result or "structured_content" in result:
            result = normalize_result(result)  # Rust (serde) servers' snake case
        if child.outer_uri is not None:
            outer_links(result, child.outer_uri)
        self._finish(result, None)

    def fail(self, error: Exception) -> None:
        """The child answered with an error (or its connection closed): so does the front."""
        child = self.child
        child.calls.pop(self.request_id, None)
        child.interrupts.pop(self.request_id, None)
        if raised_by_child(error):
            error = _error(child, error, self.tool, self.passthrough)
        self.reject(error)

    def cancel(self, msg: Any = None) -> bool:
        """The client cancelled its call (or its session closed): so do we, with the child."""
        if self.done:
            return False
        self._abandon()
        return super().cancel(msg)

    def abort(self, question: BaseException) -> None:
        """An input-required round for the front call: the child's call ends with it."""
        self._abandon()
        self.reject(question)

    def _abandon(self) -> None:
        child = self.child
        child.interrupts.pop(self.request_id, None)
        if child.calls.pop(self.request_id, None) is not None:
            self.session.abandon(self.request_id)


async def request(
    child: Child,
    method: str,
    params: JsonObject,
    ctx: RequestContext,
    passthrough: bool,
    tool: str | None = None,
    *,
    progress_route: ProgressRoute | None = None,
) -> JsonObject:
    """A request to the child on behalf of a front request, awaited: `tools/call` off the
    hot path (a child that is starting, a per-call timeout, HTTP, whose client
    re-establishes an expired session; its result's snake-case fixed), and the others
    (resources/read, prompts/get, ...), bounded by the child's list timeout.
    `progress_route`, given, is told the child and the token its progress will carry, and
    relays it instead (a task's outlives the call: relay/tasks_2025.py)."""
    child.activity += 1
    if type(ctx) is not RequestContext or ctx.peer is not child.caller:
        note_caller(child, ctx)
    connection = child.connection
    if connection is None:  # down, or not started yet: a per-session child starts now
        child.start()
        if not await child.wait_up(child.startup_timeout) or child.connection is None:
            raise unavailable(child, tool)
        connection = child.connection
    if type(ctx) is not RequestContext and revision.may_speak_stateless(child):
        lane = await revision.child_for(child, ctx)  # the revision of this front
        if lane is not child and lane.connection is not None:
            child, connection = lane, lane.connection
            child.activity += 1
    if connection.gate is not None:  # held (pinning: until its tools are compared)
        answered = await connection.admitted(method, params)
        if answered is not None:
            return answered
    session = connection.session
    request_id = session.new_request_id()
    calls = child.calls
    calls[request_id] = ctx
    is_call = method == "tools/call"
    on_progress: ProgressCallback | None = (
        None if ctx.progress_token is None else _progress_relay(ctx)
    )
    if on_progress is not None and progress_route is not None:
        on_progress = progress_route(child, request_id)
    options = CallOptions(
        child.call_timeout if is_call else child.list_timeout,
        on_progress,
        None if ctx.meta is None else _forwarded_meta(ctx.meta),
        request_id=request_id,
    )
    task = asyncio.current_task()
    questions: list[BaseException] = []
    if task is not None and getattr(ctx, "rounds", None) is not None:

        def abort(question: BaseException) -> None:
            questions.append(question)
            task.cancel()

        child.interrupts[request_id] = abort
    try:
        if session.stateless is None:
            result = await session.request(method, params, options)
        else:
            result = await stateless.request(child, session, method, params, options, ctx)
    except asyncio.CancelledError:
        if not questions or task is None:
            raise
        task.uncancel()
        raise questions[0] from None
    except McpClientError as exc:
        if not raised_by_child(exc):
            raise
        raise _error(child, exc, tool, passthrough) from None
    finally:
        calls.pop(request_id, None)
        child.interrupts.pop(request_id, None)
    if not is_call:
        return result
    if child.outer_uri is not None:
        outer_links(result, child.outer_uri)
    return normalize_result(result)


#: Content blocks that name a resource of the child: (type, where the URI is).
_LINKS = {"resource_link": None, "resource": "resource"}


def outer_links(result: JsonObject, outer: Callable[[str], str]) -> None:
    """The resources a tool result links or embeds, named as the fronts read them (the
    child's own URI is not one the gateway serves: specs/gateway.md, "Serving": Catalog)."""
    content = result.get("content")
    if type(content) is not list:
        return
    for block in content:
        if type(block) is not dict:
            continue
        kind = block.get("type")
        if kind != "resource_link" and kind != "resource":  # any type, hashable or not
            continue
        holder = block if _LINKS[kind] is None else block.get("resource")
        if type(holder) is dict and type(uri := holder.get("uri")) is str:
            holder["uri"] = outer(uri)


def unavailable(child: Child, tool: str | None) -> McpError:
    if child.state == "restarting" or (child.state == "starting" and child.restarts):
        detail = f"the server is restarting (last error: {child.last_error})"
        error = crashed_error(server=child.name, tool=tool, detail=detail)
    elif child.last_error_data is not None and child.last_error_data.get("code") is not None:
        error = child.last_error_data
        error = {**error, "data": {**error["data"], "toolName": tool}}
    else:
        detail = f"the server is {child.state}" + (
            f" (last error: {child.last_error})" if child.last_error else ""
        )
        error = crashed_error(server=child.name, tool=tool, detail=detail)
        # Still starting (a call outwaited its first start): a retry may find it up.
        error["data"]["retryable"] = child.state == "starting"
    return McpError(error["code"], error["message"], error["data"])


def _error(child: Child, exc: McpClientError, tool: str | None, passthrough: bool) -> McpError:
    """The client's exception as the error the front client gets (errors.py)."""
    error = normalize_exception(exc, server=child.name, tool=tool, passthrough=passthrough)
    if login_command(error) is not None:
        child.login_lost(error)  # revoked, or its refresh refused: it waits for a new one
    return McpError(error["code"], error["message"], error.get("data"))


def _progress_relay(ctx: RequestContext) -> Callable[[JsonObject], None]:
    token = ctx.progress_token

    def relay(params: JsonObject) -> None:
        if not ctx.cancelled and not ctx.in_task:  # a task's call was answered long ago
            ctx.peer.notify(PROGRESS, {**params, "progressToken": token}, ctx.request_id)

    return relay


def _forwarded_meta(meta: JsonObject) -> JsonObject | None:
    """The front request's `_meta`, without its progress token (the child gets ours) and
    without a 2026-07-28 envelope: the child speaks the era it was started in, and its
    rounds, tasks and questions are ours to translate for the front client."""
    if "progressToken" not in meta and ENVELOPE_KEYS.isdisjoint(meta):
        return meta
    rest = {k: v for k, v in meta.items() if k != "progressToken" and k not in ENVELOPE_KEYS}
    return rest or None
