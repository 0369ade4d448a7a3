"""The front request being relayed, built once (`FrontCall.of`): its revision, what its client
declared, where its progress goes, how its client is asked what a child asks, whether it may
become a task, and the one wait on a child that an input-required round can interrupt
(specs/gateway.md, "Relaying": Eras). A channel (children/channel.py) reads it as its `Front`."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Coroutine
from typing import Any

from codex_mcp.core.calls import PROGRESS, ProgressCallback
from codex_mcp.core.context import RequestContext
from codex_mcp.core.errors import McpError
from codex_mcp.core.jsonrpc import INTERNAL_ERROR, INVALID_REQUEST, JsonObject
from codex_mcp.core.log_levels import LOG_LEVELS
from codex_mcp.core.request_meta import TASKS_EXTENSION
from codex_mcp.core.rounds import InputRequired
from codex_mcp.core.session import CLIENT_CAPABILITY_FOR
from codex_mcp.core.stateless_context import StatelessContext
from codex_mcp.core.versions import Revision

from ..children.inflight import Entry


def check_client_can(server: str, method: str, params: JsonObject, declared: JsonObject) -> None:
    """A child's request the front client did not declare it can answer (sampling, roots,
    or an elicitation mode: a passthrough child is told every mode) gets an error that says
    so instead of reaching it."""
    needed = CLIENT_CAPABILITY_FOR.get(method)
    if needed is not None and needed not in declared:
        raise McpError(
            INVALID_REQUEST,
            f"{method}: the gateway's client does not support {needed} (it did not declare "
            f"it); the server {server!r} cannot use it here",
        )
    if method == "elicitation/create" and params.get("mode") == "url":
        modes = declared.get("elicitation")
        if not isinstance(modes, dict) or "url" not in modes:
            raise McpError(
                INVALID_REQUEST,
                f"{method}: the gateway's client does not support URL elicitation (it "
                f"declared form only); the server {server!r} cannot use it here",
            )


class FrontCall:
    """A front request of a legacy revision: its session declared what its client answers,
    and the client is asked on the request's stream."""

    __slots__ = ("_question", "_waiting", "ctx", "handoff")

    modern = False
    has_tasks = False
    may_become_task = False

    def __init__(self, ctx: RequestContext) -> None:
        self.ctx = ctx
        #: Set while a 2026-07-28 call to a legacy child may still become a task.
        self.handoff: Handoff | None = None
        self._waiting: asyncio.Task[Any] | None = None
        self._question: BaseException | None = None

    @staticmethod
    def of(ctx: RequestContext) -> FrontCall:
        """The front request `ctx` serves, by its revision."""
        return FrontCall(ctx) if ctx.revision is Revision.LEGACY else ModernFront(ctx)

    @property
    def client_capabilities(self) -> JsonObject:
        return self.ctx.client_capabilities

    @property
    def in_task(self) -> bool:
        return self.ctx.in_task

    @property
    def log_level(self) -> str | None:
        """The level its session asked for (every level until it sets one): what a child
        spoken to in 2026-07-28, which has no logging/setLevel, is told in each request."""
        return LOG_LEVELS[self.ctx.session.log_threshold]

    def progress(self) -> ProgressCallback | None:
        """What relays a child's progress to this request, under its token (None: it asked
        for none)."""
        return progress_relay(self.ctx)

    # -- waiting on a child -------------------------------------------------------------
    def interrupt(self, question: BaseException) -> None:
        """End the wait on the child with `question` (children/inflight.Entry)."""
        if self._waiting is not None and self._question is None:
            self._question = question
            self._waiting.cancel()

    async def wait(self, work: Awaitable[Any]) -> Any:
        """`work` (a request to a child), ended early by `interrupt`: then its question is
        raised here, as the front's answer."""
        task = self._waiting = asyncio.current_task()
        try:
            return await work
        except asyncio.CancelledError:
            question, self._question = self._question, None
            if question is None or task is None:
                raise
            task.uncancel()
            raise question from None
        finally:
            self._waiting = None

    # -- asking the front's client ---------------------------------------------------------
    async def put(self, server: str, method: str, params: JsonObject, entry: Entry) -> JsonObject:
        """A legacy child's request `method`, made while serving this request (`entry`)."""
        check_client_can(server, method, params, self.client_capabilities)
        return await self.ctx.request(method, params)

    async def ask(self, server: str, key: str, method: str, params: JsonObject) -> JsonObject:
        """One of a 2026-07-28 child's input requests, under its key."""
        check_client_can(server, method, params, self.client_capabilities)
        return await self.ctx.ask(method, params, key=key)

    async def answer(self, server: str, asked: JsonObject) -> JsonObject:
        """The answers to a 2026-07-28 child's input requests, all asked at once, each under
        the child's own key (a 2026-07-28 front sees the same keys)."""
        keys = list(asked)
        answers = await asyncio.gather(*(self._one(server, key, asked[key]) for key in keys))
        return dict(zip(keys, answers, strict=True))

    async def _one(self, server: str, key: str, request: Any) -> JsonObject:
        method = request.get("method") if isinstance(request, dict) else None
        params = request.get("params") if isinstance(request, dict) else None
        if method not in CLIENT_CAPABILITY_FOR:
            raise McpError(
                INTERNAL_ERROR,
                f"Internal error: {server!r} asked for {method!r}, which no client answers",
            )
        return await self.ask(server, key, method, params if isinstance(params, dict) else {})

    def adopt(self, work: Coroutine[Any, Any, JsonObject]) -> Awaitable[JsonObject]:
        """`work`'s result (a legacy front's call waits for it)."""
        return work


class ModernFront(FrontCall):
    """A 2026-07-28 front request: what it declares comes with it, and its client is asked
    through its call's task, or by an input-required round."""

    __slots__ = ()
    modern = True
    ctx: StatelessContext

    @property
    def log_level(self) -> str | None:
        return self.ctx.request_meta.log_level

    @property
    def has_tasks(self) -> bool:  # type: ignore[override]
        return bool(self.ctx.request_meta.supports_extension(TASKS_EXTENSION))

    @property
    def may_become_task(self) -> bool:  # type: ignore[override]
        return self.ctx.can_create_task

    async def put(self, server: str, method: str, params: JsonObject, entry: Entry) -> JsonObject:
        check_client_can(server, method, params, self.client_capabilities)
        if self.handoff is not None:
            await self.handoff.before_question()
        try:
            return await self.ctx.request(method, params)
        except InputRequired as question:  # asked by a round: the child's call ends
            entry.interrupt(question)
            raise McpError(
                INTERNAL_ERROR,
                f"{method}: the client answers on a retry of its call, which asks again",
            ) from None

    async def ask(self, server: str, key: str, method: str, params: JsonObject) -> JsonObject:
        # The envelope carried the front's capabilities: the child asked only what it can.
        return await self.ctx.ask(method, params, key=key)

    def adopt(self, work: Coroutine[Any, Any, JsonObject]) -> Awaitable[JsonObject]:
        """The front's own task running `work` when it may get one, else `work`'s result."""
        if self.ctx.can_create_task:
            return self.ctx.adopt_task(asyncio.get_running_loop().create_task(work))
        return work


def progress_relay(ctx: RequestContext) -> ProgressCallback | None:
    """What relays a child's progress to the front request `ctx`, under its token."""
    token = ctx.progress_token
    if token is None:
        return None

    def relay(params: JsonObject) -> None:
        if not ctx.cancelled and not ctx.in_task:  # a task's call was answered long ago
            ctx.peer.notify(PROGRESS, {**params, "progressToken": token}, ctx.request_id)

    return relay


def front_of(entry: Entry) -> FrontCall:
    """The front request an in-flight entry serves (the hot path's RelayedCall has none
    built: it is built now, for the child's question)."""
    return entry if isinstance(entry, FrontCall) else FrontCall.of(entry.ctx)


class Handoff:
    """A 2026-07-28 call to a legacy child that becomes a task when the child first asks
    something, so the question goes through the task."""

    __slots__ = ("adopted", "asked")

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        #: Set by the child's first question.
        self.asked: asyncio.Future[None] = loop.create_future()
        #: Set once the call is a task (None), or could not become one (the error).
        self.adopted: asyncio.Future[BaseException | None] = loop.create_future()

    async def before_question(self) -> None:
        if not self.asked.done():
            self.asked.set_result(None)
        failed = await self.adopted
        if failed is not None:
            raise failed


async def call_with_handoff(
    call: Coroutine[Any, Any, JsonObject], front: ModernFront
) -> JsonObject:
    """`call` (the relay of a tools/call to a legacy child) for a front that may get a task:
    its result, or, once the child asks the front something, the front's task handle, the
    call running on as the task's work."""
    inner = asyncio.ensure_future(call)
    handoff = front.handoff = Handoff(asyncio.get_running_loop())
    try:
        try:
            await asyncio.wait((inner, handoff.asked), return_when=asyncio.FIRST_COMPLETED)
        except asyncio.CancelledError:
            inner.cancel()
            raise
        if inner.done():
            return inner.result()
        try:
            handle = await front.ctx.adopt_task(inner)
        except Exception as exc:  # no room for a task: the call fails, the question too
            handoff.adopted.set_result(exc)
            raise
        handoff.adopted.set_result(None)
        return handle
    finally:
        front.handoff = None
        if not handoff.adopted.done():
            handoff.adopted.set_result(
                McpError(INTERNAL_ERROR, "Internal error: the call has ended")
            )
