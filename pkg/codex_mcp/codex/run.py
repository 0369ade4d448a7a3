"""One running turn: the events and approval requests of its thread, consumed in order, so
an approval is put to the caller only after every event before it was delivered."""

from __future__ import annotations

import asyncio
import inspect
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from codex_mcp.core.jsonrpc import JsonObject

from . import protocol
from .errors import (
    ApprovalDeclined,
    AppServerGone,
    CodexError,
    TurnFailed,
    TurnInterrupted,
)
from .protocol import ApprovalDetails, ApprovalKind

log = logging.getLogger("codex_mcp.codex")


@dataclass(frozen=True, slots=True)
class CodexEvent:
    """One app-server notification (or approval request) about the call's thread."""

    method: str
    params: JsonObject
    thread_id: str


@dataclass(frozen=True, slots=True)
class TurnResult:
    thread_id: str
    turn_id: str
    #: The turn's final agent message ("" when the model said nothing).
    content: str


#: Gets every event of the call, in order; may return an awaitable, which is awaited.
EventCallback = Callable[[CodexEvent], Any]
#: Decides an approval request: True runs the command / applies the patch.
Approver = Callable[[ApprovalKind, ApprovalDetails], Awaitable[bool]]
#: Puts an MCP server's elicitation (MCP `elicitation/create` params) to the caller; returns
#: the caller's ElicitResult.
Elicitor = Callable[[JsonObject], Awaitable[JsonObject]]


class _Approval:
    __slots__ = ("asking", "decided", "method", "params", "refused_because")

    def __init__(self, method: str, params: JsonObject) -> None:
        self.method = method
        self.params = params
        self.decided: asyncio.Future[bool] = asyncio.get_running_loop().create_future()
        self.asking: asyncio.Task[bool] | None = None
        #: Why the answer is no, when it is not simply the client declining.
        self.refused_because: str | None = None


class _Gone:
    __slots__ = ("reason",)

    def __init__(self, reason: str) -> None:
        self.reason = reason


class TurnRun:
    def __init__(
        self,
        on_event: EventCallback | None,
        approve: Approver | None,
        approval_timeout: float | None,
        elicit: Elicitor | None = None,
    ) -> None:
        self.on_event = on_event
        self.approve = approve
        self.elicit = elicit
        self.approval_timeout = approval_timeout
        self.thread_id = ""
        self.turn_id: str | None = None
        #: Set when the call stopped waiting (cancelled); the run then only waits for its
        #: turn to end, so the thread is free again, and delivers nothing.
        self.abandoned = False
        #: The task of the call waiting on this run.
        self.task: asyncio.Task[Any] | None = None
        self.interrupt_wanted = False
        #: Set once app-server said the turn ended (or it died): the thread is free.
        self.finished = asyncio.Event()
        self._queue: asyncio.Queue[tuple[str, JsonObject] | _Approval | _Gone] = asyncio.Queue()
        self._completed_turns: set[str] = set()
        self._items: dict[str, JsonObject] = {}
        self._last_message: str | None = None
        self._last_error: str | None = None
        #: What was refused and why, once an approval was refused (the turn then stops).
        self._refusal: str | None = None
        self._deciding: set[asyncio.Task[bool]] = set()

    @property
    def stopping(self) -> bool:
        """The call gave up (or is being cancelled right now): the turn is ending, so a new
        turn on the thread may wait for it rather than be refused."""
        task = self.task
        return self.abandoned or (task is not None and task.cancelling() > 0)

    # -- posting (from the connection's reader; never blocks) ------------------------
    def post_event(self, method: str, params: JsonObject) -> None:
        if method == protocol.TURN_COMPLETED:
            turn_id = protocol.turn_of(params).get("id")
            if isinstance(turn_id, str):
                self._completed_turns.add(turn_id)
            if self.abandoned and (self.turn_id is None or turn_id == self.turn_id):
                self.finished.set()
        if not self.abandoned:
            self._queue.put_nowait((method, params))

    def post_gone(self, reason: str) -> None:
        self._queue.put_nowait(_Gone(reason))
        self.finished.set()

    def abandon(self) -> None:
        self.abandoned = True
        if self.turn_id is not None and self.turn_id in self._completed_turns:
            self.finished.set()
        self._refuse_pending()

    async def decide(self, method: str, params: JsonObject) -> bool:
        """An approval request for this run's thread: True only when the approver said
        yes in time. Every failure is a refusal, so app-server always gets an answer."""
        if self.abandoned or self.finished.is_set():
            return False
        approval = _Approval(method, params)
        self._queue.put_nowait(approval)
        try:
            async with asyncio.timeout(self.approval_timeout):
                approved = await approval.decided
        except TimeoutError:
            # The timeout cancelled `decided`, so a queued request is skipped; stop asking.
            if approval.asking is not None:
                approval.asking.cancel()
            approval.refused_because = f"no answer came within {self.approval_timeout:g} s"
            approved = False
        if not approved and self._refusal is None:
            details = protocol.read_approval(method, params, self._items)
            why = approval.refused_because or "the client declined"
            self._refusal = f"Codex wanted to {_action(details)}, but {why}"
        return approved

    # -- consuming (in the call's task) ------------------------------------------------
    async def outcome(self) -> TurnResult:
        """Deliver events until the turn ends; its result, or the CodexError saying why not."""
        while True:
            entry = await self._queue.get()
            if isinstance(entry, _Gone):
                raise AppServerGone(entry.reason, self.thread_id)
            if isinstance(entry, _Approval):
                await self._ask(entry)
                continue
            method, params = entry
            self._track(method, params)
            await self._deliver(method, params)
            if method == protocol.TURN_COMPLETED:
                turn = protocol.turn_of(params)
                if self.turn_id is None or turn.get("id") == self.turn_id:
                    return self._result(turn)

    def close(self) -> None:
        self.finished.set()
        self._refuse_pending()

    def _track(self, method: str, params: JsonObject) -> None:
        item = params.get("item")
        if method == protocol.ITEM_STARTED and isinstance(item, dict) and "id" in item:
            self._items[str(item["id"])] = item  # a patch approval's changes are here
        if params.get("threadId", self.thread_id) != self.thread_id:
            return  # a sub-agent's messages and errors are not this turn's answer
        if method == protocol.ITEM_COMPLETED:
            text = protocol.agent_message_text(item)
            if text is not None:
                self._last_message = text
        elif method == protocol.ERROR and not params.get("willRetry"):
            error = params.get("error")
            if isinstance(error, dict) and error.get("message"):
                self._last_error = str(error["message"])

    async def _deliver(self, method: str, params: JsonObject) -> None:
        if self.on_event is None:
            return
        try:
            result = self.on_event(CodexEvent(method, params, self.thread_id))
            if inspect.isawaitable(result):
                await result
        except Exception:
            log.exception("event callback failed on %s", method)

    async def _ask(self, approval: _Approval) -> None:
        await self._deliver(approval.method, approval.params)
        if approval.decided.done():  # timed out or refused while queued
            return
        kind = protocol.approval_kind(approval.method)
        details = protocol.read_approval(approval.method, approval.params, self._items)
        if self.approve is None:
            approval.refused_because = "nobody can approve it here"
            approval.decided.set_result(False)
            return
        task = asyncio.get_running_loop().create_task(self._approve(approval, kind, details))
        approval.asking = task
        self._deciding.add(task)

        def settle(done: asyncio.Task[bool]) -> None:
            self._deciding.discard(done)
            if not approval.decided.done():
                approved = not done.cancelled() and done.exception() is None and done.result()
                approval.decided.set_result(bool(approved))

        task.add_done_callback(settle)

    async def _approve(
        self, approval: _Approval, kind: ApprovalKind, details: ApprovalDetails
    ) -> bool:
        assert self.approve is not None
        try:
            return bool(await self.approve(kind, details))
        except Exception as exc:
            log.warning("approval request failed: %s", exc)
            approval.refused_because = f"the client could not be asked ({exc})"
            return False

    def _refuse_pending(self) -> None:
        for task in list(self._deciding):
            task.cancel()
        while not self._queue.empty():
            entry = self._queue.get_nowait()
            if isinstance(entry, _Approval) and not entry.decided.done():
                entry.decided.set_result(False)

    def _result(self, turn: JsonObject) -> TurnResult:
        status = turn.get("status")
        turn_id = str(turn.get("id") or self.turn_id or "")
        if status == "completed":
            final = protocol.final_message(turn)
            content = final if final is not None else (self._last_message or "")
            return TurnResult(self.thread_id, turn_id, content)
        error: CodexError
        if status == "interrupted" and self._refusal is not None:
            error = ApprovalDeclined(
                f"{self._refusal}; so it did not happen, and the turn was stopped "
                f"(thread {self.thread_id})",
                self.thread_id,
            )
        elif status == "interrupted":
            error = TurnInterrupted(
                f"the Codex turn was interrupted (thread {self.thread_id})", self.thread_id
            )
        elif status == "failed":
            message = protocol.turn_error_message(turn)
            if turn.get("error") is None and self._last_error:
                message = self._last_error
            error = TurnFailed(f"the Codex turn failed: {message}", self.thread_id)
        else:
            error = TurnFailed(f"the Codex turn ended with status {status!r}", self.thread_id)
        raise error


def _action(details: ApprovalDetails) -> str:
    if details.changes is not None or details.command is None:
        files = ", ".join(str(change.get("path")) for change in details.changes or [])
        return f"apply a patch ({files})" if files else "apply a patch"
    return f"run `{details.command}` in {details.cwd or 'its working directory'}"
