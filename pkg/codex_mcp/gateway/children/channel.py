"""One connection to a child with its revision hidden: `request(method, params, options,
front)` gives the complete result whatever the child speaks, for a front of either revision
(specs/gateway.md, "Relaying": Eras). A child we initialized answers as it is (its questions
reach the front through its requests to us: the relay puts them); a child that speaks
2026-07-28 only is sent the front's envelope, and its input-required rounds and tasks are
seen through here (its task id never leaves the gateway)."""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import logging
from collections.abc import Awaitable, Coroutine
from typing import Any, Final, Protocol

from codex_mcp.client.session import ClientSession
from codex_mcp.client.stateless import MAX_ROUNDS
from codex_mcp.codex_compat.repair import normalize_result
from codex_mcp.core.calls import CallOptions
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

from .inflight import InFlight

log = logging.getLogger("codex_mcp.gateway")

#: Seconds each of our requests about a child's task (tasks/get, update, cancel) may take.
TASK_REQUEST_TIMEOUT: Final = 30.0
#: Bounds on how often a 2026-07-28 child's task is polled (its pollIntervalMs, within these).
_MIN_POLL, _MAX_POLL = 0.05, 5.0


class Front(Protocol):
    """What a channel needs of the front request it serves (relay/front.py's FrontCall)."""

    @property
    def modern(self) -> bool:
        """Does the front speak 2026-07-28 (its request carries the envelope)?"""

    @property
    def client_capabilities(self) -> JsonObject: ...
    @property
    def log_level(self) -> str | None: ...
    @property
    def has_tasks(self) -> bool:
        """Did it declare the tasks extension (2026-07-28)?"""

    @property
    def in_task(self) -> bool: ...

    async def answer(self, server: str, asked: JsonObject) -> JsonObject:
        """The front's answers to a 2026-07-28 child's input requests, by the child's keys."""

    def adopt(self, work: Coroutine[Any, Any, JsonObject]) -> Awaitable[JsonObject]:
        """`work`'s result, or the front's own task running it when the front may get one."""


class LegacyChannel:
    """A child we initialized (a revision before 2026-07-28)."""

    __slots__ = ("inflight", "name", "session")

    def __init__(self, name: str, session: ClientSession, inflight: InFlight) -> None:
        self.name = name
        self.session = session
        #: What is in flight on it (the relay writes it; children/inflight.py).
        self.inflight = inflight

    def request(
        self, method: str, params: JsonObject, options: CallOptions, front: Front
    ) -> Awaitable[JsonObject]:
        return self.session.request(method, params, options)

    def notify(self, method: str, params: JsonObject | None = None) -> None:
        self.session.notify(method, params)


class StatelessChannel(LegacyChannel):
    """A child spoken to in 2026-07-28: each request carries the front's envelope, and is
    sent again with the front's answers until its result is complete."""

    __slots__ = ("_cancelling",)

    def __init__(self, name: str, session: ClientSession, inflight: InFlight) -> None:
        super().__init__(name, session, inflight)
        #: tasks/cancel on their way to the child (kept, so none is collected mid-flight).
        self._cancelling: set[asyncio.Task[None]] = set()

    async def request(
        self, method: str, params: JsonObject, options: CallOptions, front: Front
    ) -> JsonObject:
        """`options.request_id` is in the session's in-flight table (the caller takes it
        out); each round goes under a new id, there while it runs."""
        with_tasks = front.has_tasks
        stamped = self._stamped(options, front, with_tasks)
        retry = params
        try:
            for _ in range(MAX_ROUNDS):
                try:
                    result = await JsonRpcPeer.request(self.session, method, retry, stamped)
                except McpError as exc:
                    if with_tasks or front.modern or not _needs_tasks(exc):
                        raise
                    # A legacy front's call can wait for the task the child insists on.
                    with_tasks = True
                    stamped = self._stamped(self._renewed(stamped), front, True)
                    result = await JsonRpcPeer.request(self.session, method, retry, stamped)
                kind = result.get("resultType", RESULT_COMPLETE)
                if kind == RESULT_TASK:
                    return await front.adopt(self._follow(front, result))
                if kind != RESULT_INPUT_REQUIRED:
                    return _plain(result)
                retry = {
                    k: v for k, v in params.items() if k not in ("inputResponses", "requestState")
                }
                asked = result.get("inputRequests")
                if isinstance(asked, dict) and asked:
                    retry["inputResponses"] = await front.answer(self.name, asked)
                state = result.get("requestState")
                if isinstance(state, str):
                    retry["requestState"] = state
                stamped = self._renewed(stamped)
        finally:
            if stamped.request_id != options.request_id:
                self.inflight.calls.pop(stamped.request_id, None)
        raise McpError(
            INTERNAL_ERROR,
            f"Internal error: {self.name!r} still asked for input after {MAX_ROUNDS} rounds",
        )

    def _stamped(self, options: CallOptions, front: Front, tasks: bool) -> CallOptions:
        """`options` with the envelope: the front's capabilities, with the tasks extension or
        without it, and the front's logLevel when it sent one."""
        era = self.session.stateless
        assert era is not None
        if front.log_level is not None:  # the child's log messages the front asked for
            era = dataclasses.replace(era, log_level=front.log_level)
        capabilities = {**front.client_capabilities}
        extensions = capabilities.get("extensions")
        extensions = dict(extensions) if isinstance(extensions, dict) else {}
        if tasks:
            extensions[TASKS_EXTENSION] = {}
        else:
            extensions.pop(TASKS_EXTENSION, None)
        capabilities["extensions"] = extensions
        meta = {**(options.meta or {}), CLIENT_CAPABILITIES_KEY: capabilities}
        stamped = dataclasses.replace(options, meta=meta)
        return era.stamp(stamped, self.session.transport.cancels_by_notification)

    def _renewed(self, options: CallOptions) -> CallOptions:
        """`options` under a new request id, in the in-flight table instead of the old one
        (a request is sent once per id)."""
        request_id = self.session.new_request_id()
        calls = self.inflight.calls
        entry = calls.pop(options.request_id, None)
        if entry is not None:
            calls[request_id] = entry
        return dataclasses.replace(options, request_id=request_id)

    # -- a task the child made of a call, seen through ------------------------------------
    async def _follow(self, front: Front, created: JsonObject) -> JsonObject:
        task_id = created.get("taskId")
        if not isinstance(task_id, str):
            raise McpError(
                INTERNAL_ERROR, f"Internal error: {self.name!r} made a task without a taskId"
            )
        options = self._stamped(CallOptions(timeout=TASK_REQUEST_TIMEOUT), front, True)

        async def ask(method: str, params: JsonObject) -> JsonObject:
            return await self.session.request(method, {"taskId": task_id, **params}, options)

        answered: set[str] = set()
        task = created
        try:
            while True:
                status = task.get("status")
                if status == "completed":
                    final = task.get("result")
                    return normalize_result(final if isinstance(final, dict) else {"content": []})
                if status == "failed":
                    raise _failure(self.name, task.get("error"))
                if status == "cancelled":
                    break
                waiting = task.get("inputRequests") if status == "input_required" else None
                fresh = {
                    key: asked
                    for key, asked in (waiting.items() if isinstance(waiting, dict) else ())
                    if key not in answered
                }
                if fresh:
                    responses = await front.answer(self.name, fresh)
                    answered.update(fresh)
                    await ask("tasks/update", {"inputResponses": responses})
                else:
                    interval = task.get("pollIntervalMs")
                    seconds = interval / 1000 if isinstance(interval, int | float) else 0.5
                    await asyncio.sleep(min(max(seconds, _MIN_POLL), _MAX_POLL))
                task = await ask("tasks/get", {})
        except asyncio.CancelledError:
            # The front cancelled (its tasks/cancel, or its call): so does the child's task.
            cancel = asyncio.get_running_loop().create_task(self._cancel(ask))
            self._cancelling.add(cancel)
            cancel.add_done_callback(self._cancelling.discard)
            raise
        if front.in_task:
            raise asyncio.CancelledError  # the child cancelled its task: so ends the gateway's
        raise McpError(INTERNAL_ERROR, f"Internal error: {self.name!r} cancelled the task")

    async def _cancel(self, ask: Any) -> None:
        with contextlib.suppress(Exception):
            await ask("tasks/cancel", {})
            log.debug("%s: its task was cancelled, as the client's was", self.name)


def _needs_tasks(exc: McpError) -> bool:
    """The child refused a call without the tasks extension (-32021 naming it)."""
    if exc.code != MISSING_REQUIRED_CLIENT_CAPABILITY:
        return False
    required = exc.data.get("requiredCapabilities") if isinstance(exc.data, dict) else None
    extensions = required.get("extensions") if isinstance(required, dict) else None
    return isinstance(extensions, dict) and TASKS_EXTENSION in extensions


def _plain(result: JsonObject) -> JsonObject:
    """The child's complete result without what the 2026-07-28 revision adds to it."""
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


def _failure(name: str, error: Any) -> McpError:
    if isinstance(error, dict) and isinstance(error.get("code"), int):
        return McpError(error["code"], str(error.get("message", "")), error.get("data"))
    return McpError(INTERNAL_ERROR, f"Internal error: {name!r}'s task failed")
