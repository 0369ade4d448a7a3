"""Requests relayed to a child, each tied to the front request that caused it (specs/gateway.md,
"Relaying"): the hot path of a tools/call (`RelayedCall`), and `request`, the one wait on a
child (through its channel, whatever revision either end speaks) and the one error mapping,
for every other request."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Hashable
from typing import Any

from codex_mcp.client.errors import McpClientError
from codex_mcp.codex_compat.repair import normalize_result
from codex_mcp.core.calls import CallOptions, ProgressCallback
from codex_mcp.core.context import RequestContext
from codex_mcp.core.deferred import Deferred
from codex_mcp.core.errors import McpError
from codex_mcp.core.jsonrpc import JsonObject
from codex_mcp.core.request_meta import ENVELOPE_KEYS
from codex_mcp.core.versions import Revision

from ..children.channel import TASK_REQUEST_TIMEOUT
from ..children.child import Child
from ..children.connection import ChildSession, Connection
from ..children.inflight import InFlight
from ..errors import crashed_error, login_command, normalize_exception, raised_by_child
from .attribution import note_caller
from .front import FrontCall, ModernFront, call_with_handoff, progress_relay

LEGACY = Revision.LEGACY
#: Told the connection and the progress token of a request to it; returns what the request
#: does with the progress (the route relays it).
ProgressRoute = Callable[[Connection, Hashable], ProgressCallback]


def call_tool(
    child: Child, tool: str, arguments: JsonObject, ctx: RequestContext
) -> Awaitable[JsonObject]:
    """tools/call on the child. The hot path (a stdio child up and initialized, no per-call
    timeout: `Connection.direct`; a legacy front, or a 2026-07-28 one that can neither get a
    task nor reach the child in its own revision) sends at once and answers the front
    request from the child's answer as it is read: no task, no future, no loop turn between
    (core/deferred.py), one object per call."""
    connection = child.connection
    params = {"name": tool, "arguments": arguments}
    legacy = ctx.revision is LEGACY
    if (
        connection is None
        or not connection.direct
        or not (legacy or not (ctx.can_create_task or child.may_open_lane))
    ):
        return _awaited(child, connection, params, FrontCall.of(ctx))
    if not legacy or ctx.peer is not child.callers.last:
        note_caller(child.callers, ctx)
    session = connection.session
    call = RelayedCall(child, session, tool, ctx)
    meta = ctx.meta
    options = None
    if meta is not None:  # its progress token becomes ours; the rest of _meta goes along
        call.on_progress = progress_relay(ctx)
        options = CallOptions(on_progress=call.on_progress, meta=_forwarded_meta(meta))
    try:
        request_id = session.request_for(call, params, options)
    except McpClientError as exc:
        if not raised_by_child(exc):
            raise
        raise child_error(child, exc, tool) from None
    # The answer cannot come before this: the request is written in a later loop turn.
    call.request_id = request_id
    inflight = call.inflight
    inflight.activity += 1
    inflight.calls[request_id] = call
    return call


def _awaited(
    child: Child, connection: Connection | None, params: JsonObject, front: FrontCall
) -> Awaitable[JsonObject]:
    """tools/call off the hot path (`request`); for a 2026-07-28 front that may get a task,
    one when a legacy child asks it something (call_with_handoff)."""
    work = request(child, "tools/call", params, front, params["name"])
    legacy_child = connection is None or connection.session.stateless is None
    if isinstance(front, ModernFront) and front.may_become_task and legacy_child:
        return call_with_handoff(work, front)
    return work


class RelayedCall(Deferred):
    """One tools/call relayed on the hot path, all in one object: the front request's
    answer (a Deferred the core answers from), what waits for the child's answer (the
    client session's `Waiter`), its in-flight entry (children/inflight.Entry), and what
    cancelling it does to the child's call."""

    __slots__ = ("child", "ctx", "inflight", "on_progress", "request_id", "session", "tool")

    #: As a Waiter: the child's method, and never settled before its answer (a cancelled
    #: call is taken off the session's list at once).
    method = "tools/call"
    settled = False
    #: Our id for the child's call, once it is sent.
    request_id: Any

    def __init__(self, child: Child, session: ChildSession, tool: str, ctx: RequestContext) -> None:
        # Deferred.__init__, inline (one call less per relayed call).
        self._settle = self._outcome = self._finished = self.on_cancel = None
        self.cancelled = False
        self.child = child
        self.session = session
        self.tool = tool
        self.ctx = ctx
        self.on_progress: ProgressCallback | None = None
        self.inflight: InFlight = session.inflight

    def succeed(self, result: JsonObject) -> None:
        """The child answered: answer the front request (Deferred._finish, inline: the
        core's answer is sent from here)."""
        self.inflight.calls.pop(self.request_id, None)
        if "is_error" in result or "structured_content" in result:
            result = normalize_result(result)  # Rust (serde) servers' snake case
        outer = self.child.outer_uri
        if outer is not None:
            outer_links(result, outer)
        settle = self._settle
        if settle is None or self._finished is not None or self._outcome is not None:
            self._finish(result, None)  # awaited, or not bound yet: the general way
            return
        self._outcome = (result, None)
        self._settle = self.on_cancel = None  # no cycles left
        settle(result, None)

    def fail(self, error: Exception) -> None:
        """The child answered with an error (or its connection closed): so does the front."""
        self.inflight.calls.pop(self.request_id, None)
        if raised_by_child(error):
            error = child_error(self.child, error, self.tool)
        self.reject(error)

    def cancel(self, msg: Any = None) -> bool:
        """The client cancelled its call (or its session closed): so do we, with the child."""
        if self.done:
            return False
        self._abandon()
        return super().cancel(msg)

    def interrupt(self, question: BaseException) -> None:
        """An input-required round for the front call: the child's call ends with it."""
        self._abandon()
        self.reject(question)

    def _abandon(self) -> None:
        if self.inflight.calls.pop(self.request_id, None) is not None:
            self.session.abandon(self.request_id)


async def request(
    child: Child,
    method: str,
    params: JsonObject,
    front: FrontCall | RequestContext,
    tool: str | None = None,
    *,
    progress_route: ProgressRoute | None = None,
    on: Connection | None = None,
) -> JsonObject:
    """A request to the child on behalf of a front request, awaited: `tools/call` off the
    hot path (its result's snake case fixed, its links named as the fronts know them), and
    every other request; on the connection the front's revision reaches the child by
    (started now if it is down), or `on` (the one a task lives on). Bounded by the child's
    call timeout (tools/call, tasks/result), its list timeout, or for tasks/get and
    tasks/cancel TASK_REQUEST_TIMEOUT. `progress_route`, given, is told the token the child's
    progress will carry and relays it instead (a task's outlives the call)."""
    if not isinstance(front, FrontCall):
        front = FrontCall.of(front)
    ctx = front.ctx
    if front.modern or ctx.peer is not child.callers.last:
        note_caller(child.callers, ctx)
    connection = on or await child.connection_for(front.modern)
    if connection is None:
        raise unavailable(child, tool)
    if connection.gate is not None:  # held (pinning: until its tools are compared)
        answered = await connection.admitted(method, params)
        if answered is not None:
            return answered
    session = connection.session
    inflight = session.inflight
    inflight.activity += 1
    request_id = session.new_request_id()
    if method.startswith("tasks/"):  # about a task: its progress keeps its call's token
        timeout = child.call_timeout if method == "tasks/result" else TASK_REQUEST_TIMEOUT
        options = CallOptions(timeout, request_id=request_id)
    else:
        on_progress = front.progress()
        if on_progress is not None and progress_route is not None:
            on_progress = progress_route(connection, request_id)
        meta = None if ctx.meta is None else _forwarded_meta(ctx.meta)
        timeout = child.call_timeout if method == "tools/call" else child.list_timeout
        options = CallOptions(timeout, on_progress, meta, request_id=request_id)
    inflight.calls[request_id] = front
    try:
        result: JsonObject = await front.wait(
            connection.channel.request(method, params, options, front)
        )
    except McpClientError as exc:
        if not raised_by_child(exc):
            raise
        raise child_error(child, exc, tool) from None
    finally:
        inflight.calls.pop(request_id, None)
    if method != "tools/call":
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


def child_error(child: Child, exc: McpClientError, tool: str | None) -> McpError:
    """The client's exception as the error the front client gets (errors.py, unless
    WRAPPER_ERROR_PASSTHROUGH); a login the server no longer takes puts the child into
    `needs login`, whatever the request was."""
    passthrough = child.env.error_passthrough
    error = normalize_exception(exc, server=child.name, tool=tool, passthrough=passthrough)
    if login_command(error) is not None:
        child.login_lost(error)  # revoked, or its refresh refused: it waits for a new one
    return McpError(error["code"], error["message"], error.get("data"))


def _forwarded_meta(meta: JsonObject) -> JsonObject | None:
    """The front request's `_meta`, without its progress token (the child gets ours) and
    without a 2026-07-28 envelope: the child speaks the revision it was greeted in, and its
    rounds, tasks and questions are ours to translate for the front client."""
    if "progressToken" not in meta and ENVELOPE_KEYS.isdisjoint(meta):
        return meta
    rest = {k: v for k, v in meta.items() if k != "progressToken" and k not in ENVELOPE_KEYS}
    return rest or None
