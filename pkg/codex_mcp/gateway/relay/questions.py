"""A child's question (elicitation, sampling, roots) put to the front client, one strategy per
front revision (`for_front`; specs/gateway.md, "Relaying": Eras)."""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from typing import Any

from codex_mcp.core.context import RequestContext
from codex_mcp.core.errors import McpError
from codex_mcp.core.jsonrpc import INTERNAL_ERROR, INVALID_REQUEST, JsonObject
from codex_mcp.core.rounds import InputRequired
from codex_mcp.core.session import CLIENT_CAPABILITY_FOR
from codex_mcp.core.stateless_context import StatelessContext

from ..children.child import Child


def check_client_can(child: Child, method: str, params: JsonObject, declared: JsonObject) -> None:
    """A child's request the front client did not declare it can answer (sampling, roots,
    or an elicitation mode: a passthrough child is told every mode) gets an error that says
    so instead of reaching it."""
    needed = CLIENT_CAPABILITY_FOR.get(method)
    if needed is not None and needed not in declared:
        raise McpError(
            INVALID_REQUEST,
            f"{method}: the gateway's client does not support {needed} (it did not declare "
            f"it); the server {child.name!r} cannot use it here",
        )
    if method == "elicitation/create" and params.get("mode") == "url":
        modes = declared.get("elicitation")
        if not isinstance(modes, dict) or "url" not in modes:
            raise McpError(
                INVALID_REQUEST,
                f"{method}: the gateway's client does not support URL elicitation (it "
                f"declared form only); the server {child.name!r} cannot use it here",
            )


class LegacyFront:
    """A front of the legacy revisions: its session declared what it answers, and it is
    asked on its call's stream."""

    async def put(
        self, child: Child, call: RequestContext, method: str, params: JsonObject
    ) -> JsonObject:
        """A legacy child's request `method`, made while serving `call`."""
        check_client_can(child, method, params, call.client_capabilities)
        return await call.request(method, params)

    async def ask(
        self, child: Child, call: RequestContext, key: str, method: str, params: JsonObject
    ) -> JsonObject:
        """One of a 2026-07-28 child's input requests, under its key."""
        check_client_can(child, method, params, call.client_capabilities)
        return await call.ask(method, params, key=key)


class StatelessFront(LegacyFront):
    """A 2026-07-28 front: asked through its call's task, or by an input-required round."""

    async def put(
        self, child: Child, call: RequestContext, method: str, params: JsonObject
    ) -> JsonObject:
        check_client_can(child, method, params, call.client_capabilities)
        if _handoffs:
            await _before_question(call)
        try:
            return await call.request(method, params)
        except InputRequired as question:  # asked by a round: the child's call ends
            interrupt(child, call, question)
            raise McpError(
                INTERNAL_ERROR,
                f"{method}: the client answers on a retry of its call, which asks again",
            ) from None

    async def ask(
        self, child: Child, call: RequestContext, key: str, method: str, params: JsonObject
    ) -> JsonObject:
        # The envelope carried the front's capabilities: the child asked only what it can.
        return await call.ask(method, params, key=key)


_LEGACY, _STATELESS = LegacyFront(), StatelessFront()


def for_front(call: RequestContext) -> LegacyFront:
    """How questions are put to the client of `call`, by its revision."""
    return _STATELESS if isinstance(call, StatelessContext) else _LEGACY


async def answer(child: Child, ctx: RequestContext, asked: JsonObject) -> JsonObject:
    """The front's answers to a 2026-07-28 child's input requests, all asked at once, each
    under the child's own key (a 2026-07-28 front sees the same keys)."""
    keys = list(asked)
    answers = await asyncio.gather(*(_ask(child, ctx, key, asked[key]) for key in keys))
    return dict(zip(keys, answers, strict=True))


async def _ask(child: Child, ctx: RequestContext, key: str, request: Any) -> JsonObject:
    method = request.get("method") if isinstance(request, dict) else None
    params = request.get("params") if isinstance(request, dict) else None
    if method not in CLIENT_CAPABILITY_FOR:
        raise McpError(
            INTERNAL_ERROR,
            f"Internal error: {child.name!r} asked for {method!r}, which no client answers",
        )
    return await for_front(ctx).ask(
        child, ctx, key, method, params if isinstance(params, dict) else {}
    )


def interrupt(child: Child, call: RequestContext, question: BaseException) -> None:
    """End the child's calls for the front request `call` with `question` (an input-required
    round: the front's retry runs them again, and the child's question finds its answer)."""
    for request_id, owner in list(child.calls.items()):
        if owner is call:
            abort = child.interrupts.pop(request_id, None)
            if abort is not None:
                abort(question)


class Handoff:
    """A call to a legacy child that becomes a task when the child first asks something."""

    __slots__ = ("adopted", "asked")

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        #: Set by the child's first question.
        self.asked: asyncio.Future[None] = loop.create_future()
        #: Set once the call is a task (None), or could not become one (the error).
        self.adopted: asyncio.Future[BaseException | None] = loop.create_future()


#: The 2026-07-28 front calls (to legacy children) that become tasks at their first question.
_handoffs: dict[RequestContext, Handoff] = {}


async def call_with_handoff(
    call: Coroutine[Any, Any, JsonObject], ctx: StatelessContext
) -> JsonObject:
    """`call` (the relay of a tools/call to a legacy child) for a front that may get a task:
    its result, or, once the child asks the front something, the gateway's task handle,
    the call running on as the task's work."""
    inner = asyncio.ensure_future(call)
    handoff = Handoff(asyncio.get_running_loop())
    _handoffs[ctx] = handoff
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
        _handoffs.pop(ctx, None)
        if not handoff.adopted.done():
            handoff.adopted.set_result(
                McpError(INTERNAL_ERROR, "Internal error: the call has ended")
            )


async def _before_question(call: RequestContext) -> None:
    """A legacy child is about to ask `call`'s client something: a call that may become a
    task becomes one first, so the question goes through the task."""
    handoff = _handoffs.get(call)
    if handoff is None:
        return
    if not handoff.asked.done():
        handoff.asked.set_result(None)
    failed = await handoff.adopted
    if failed is not None:
        raise failed
