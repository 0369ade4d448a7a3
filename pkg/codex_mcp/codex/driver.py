"""Driving Codex through one `codex app-server` connection: the `codex` and `codex-reply`
calls as turns on app-server threads, routed by thread id (specs/codex-tools.md)."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
from collections.abc import Mapping
from typing import Any, Final

from codex_mcp import __version__
from codex_mcp.core.errors import McpError
from codex_mcp.core.jsonrpc import JsonObject

from ..session_logs import TRACE
from . import protocol
from .binary import CodexBinary, find_codex
from .connection import AppServerConnection, StdioConnection
from .errors import (
    AppServerGone,
    AppServerRequestFailed,
    ThreadBusy,
    UnknownThread,
)
from .protocol import ThreadOptions
from .run import Approver, Elicitor, EventCallback, TurnResult, TurnRun

log = logging.getLogger("codex_mcp.codex")

#: Notifications kept for a thread whose thread/start answer is still on its way.
_MAX_EARLY: Final = 256


class CodexDriver:
    def __init__(
        self,
        connection: AppServerConnection,
        *,
        approval_timeout: float | None = 600.0,
        request_timeout: float | None = 120.0,
        interrupt_grace: float = 10.0,
    ) -> None:
        self.connection = connection
        self.approval_timeout = approval_timeout
        self.request_timeout = request_timeout
        #: How long a new turn waits for the interrupted previous turn of its thread to end.
        self.interrupt_grace = interrupt_grace
        self._threads: set[str] = set()
        self._parents: dict[str, str] = {}
        self._runs: dict[str, TurnRun] = {}
        self._starting = 0
        self._early: dict[str, list[tuple[str, JsonObject]]] = {}
        self._gone: str | None = None
        self._background: set[asyncio.Task[Any]] = set()
        connection.on_notification(self._on_notification)
        connection.on_close(self._on_close)
        for method in protocol.APPROVAL_METHODS:
            connection.handle_requests(method, self._approval_handler(method))
        connection.handle_requests(protocol.MCP_ELICITATION, self._on_mcp_elicitation)

    @classmethod
    async def spawn(
        cls,
        binary: CodexBinary | None = None,
        *,
        env: Mapping[str, str] | None = None,
        cwd: str | None = None,
        args: tuple[str, ...] = (),
        **options: Any,
    ) -> CodexDriver:
        """Start `codex app-server` (found with `find_codex` unless given) and shake hands.
        `env` is laid over our environment (CODEX_BIN, PATH and CODEX_HOME come from there)."""
        full_env = {**os.environ, **(env or {})}
        binary = binary or await find_codex(full_env)
        connection = StdioConnection([binary.path, "app-server", *args], env=full_env, cwd=cwd)
        try:
            await connection.start()
            driver = cls(connection, **options)
            await driver.start()
        except BaseException:
            # Failed or cancelled half-way: the process (if any) must not outlive us.
            await connection.close()
            raise
        return driver

    async def start(self) -> None:
        """app-server's handshake: initialize, then the `initialized` notification."""
        await self._request(
            protocol.INITIALIZE, protocol.initialize_params("codex-mcp", __version__)
        )
        await self._notify(protocol.INITIALIZED)

    @property
    def threads(self) -> frozenset[str]:
        """The threads this driver started (the only ones `reply` continues)."""
        return frozenset(self._threads)

    @property
    def gone(self) -> str | None:
        """Why the app-server connection ended, or None while it is alive."""
        return self._gone

    # -- the two calls -----------------------------------------------------------------
    async def codex(
        self,
        prompt: str,
        options: ThreadOptions | None = None,
        *,
        on_event: EventCallback | None = None,
        approve: Approver | None = None,
        elicit: Elicitor | None = None,
    ) -> TurnResult:
        """Start a thread and run its first turn: the `codex` tool. `approve` decides
        command and patch approvals; `elicit` answers the elicitations of Codex's MCP
        servers (Codex's approval of an MCP tool call among them); without it they are
        declined."""
        self._check_alive()
        run = TurnRun(on_event, approve, self.approval_timeout, elicit)
        self._starting += 1
        try:
            started = await self._request(
                protocol.THREAD_START, protocol.thread_start_params(options or ThreadOptions())
            )
            thread_id = str(started["thread"]["id"])
            # Bind before anything can yield: thread/started may already be waiting.
            self._threads.add(thread_id)
            self._bind(run, thread_id)
        finally:
            self._starting -= 1
            if not self._starting:
                self._early.clear()
        return await self._run_turn(run, prompt)

    async def reply(
        self,
        thread_id: str,
        prompt: str,
        *,
        on_event: EventCallback | None = None,
        approve: Approver | None = None,
        elicit: Elicitor | None = None,
    ) -> TurnResult:
        """Run the next turn on a thread this driver started: the `codex-reply` tool."""
        self._check_alive()
        if thread_id not in self._threads:
            raise UnknownThread(f"Session not found for thread_id: {thread_id}", thread_id)
        await self._wait_for_thread(thread_id)
        run = TurnRun(on_event, approve, self.approval_timeout, elicit)
        self._bind(run, thread_id)
        return await self._run_turn(run, prompt)

    async def interrupt(self, thread_id: str) -> bool:
        """Interrupt the turn running on the thread; its call then fails with
        TurnInterrupted. False when nothing runs there."""
        run = self._runs.get(thread_id)
        if run is None or run.abandoned:
            return False
        run.interrupt_wanted = True
        if run.turn_id is not None:
            await self._send_interrupt(run, run.turn_id)
        return True

    async def close(self) -> None:
        """Stop app-server (closing its stdin ends it); running calls fail with AppServerGone."""
        await self.connection.close()
        self._on_close("the Codex app-server connection was closed")
        for task in list(self._background):
            task.cancel()

    # -- turns -----------------------------------------------------------------------
    async def _wait_for_thread(self, thread_id: str) -> None:
        """One turn at a time per thread, in order: a new turn on a busy thread would steer
        the running one instead. A turn being stopped gets `interrupt_grace` to end."""
        while (previous := self._runs.get(thread_id)) is not None:
            if previous.stopping:
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(previous.finished.wait(), self.interrupt_grace)
                if not previous.finished.is_set():
                    raise ThreadBusy(
                        f"thread {thread_id} is still stopping an interrupted turn after "
                        f"{self.interrupt_grace:g} s; try again later",
                        thread_id,
                    )
            else:
                await previous.finished.wait()
            self._release(previous)  # its owner may not have run yet; releasing is idempotent
            self._check_alive()

    def _bind(self, run: TurnRun, thread_id: str) -> None:
        run.thread_id = thread_id
        self._runs[thread_id] = run
        for method, params in self._early.pop(thread_id, ()):
            run.post_event(method, params)

    async def _run_turn(self, run: TurnRun, prompt: str) -> TurnResult:
        thread_id = run.thread_id
        run.task = asyncio.current_task()
        loop = asyncio.get_running_loop()
        # Shielded: if the call is cancelled meanwhile, the turn id is still needed to stop it.
        starting = loop.create_task(
            self._request(protocol.TURN_START, protocol.turn_start_params(thread_id, prompt))
        )
        try:
            started = await asyncio.shield(starting)
            turn_id = protocol.turn_of(started).get("id")
            run.turn_id = str(turn_id) if turn_id is not None else None
            if run.interrupt_wanted and run.turn_id is not None:
                self._spawn(self._send_interrupt(run, run.turn_id))
            return await run.outcome()
        except asyncio.CancelledError:
            run.abandon()
            self._spawn(self._stop_abandoned(run, starting))
            raise
        finally:
            if not run.abandoned:
                self._release(run)

    async def _stop_abandoned(self, run: TurnRun, starting: asyncio.Task[JsonObject]) -> None:
        """The call gave up: interrupt its turn, free the thread once the turn has ended."""
        try:
            started = await starting
            turn_id = protocol.turn_of(started).get("id")
            run.turn_id = str(turn_id) if turn_id is not None else None
            if run.turn_id is not None and not run.finished.is_set():
                await self._send_interrupt(run, run.turn_id)
                await asyncio.wait_for(run.finished.wait(), self.interrupt_grace)
        except Exception as exc:
            log.info("stopping the abandoned turn on %s: %s", run.thread_id, exc)
        finally:
            self._release(run)

    def _release(self, run: TurnRun) -> None:
        run.close()
        if self._runs.get(run.thread_id) is run:
            del self._runs[run.thread_id]

    async def _send_interrupt(self, run: TurnRun, turn_id: str) -> None:
        try:
            await self._request(
                protocol.TURN_INTERRUPT, {"threadId": run.thread_id, "turnId": turn_id}
            )
        except AppServerRequestFailed as exc:
            log.info("interrupt of %s refused (it may have just ended): %s", turn_id, exc)

    # -- from app-server -------------------------------------------------------------
    def _on_notification(self, method: str, params: JsonObject) -> None:
        if log.isEnabledFor(TRACE):
            log.log(TRACE, "app-server sent %s %s", method, params)
        thread_id = protocol.thread_id_of(params)
        if thread_id is None:
            return  # process-wide news (account, config warnings): no call's business
        if method == protocol.THREAD_STARTED:
            parent = protocol.parent_thread_of(params)
            if parent is not None and self._root(parent) in self._threads:
                self._parents[thread_id] = self._root(parent)
        root = self._root(thread_id)
        run = self._runs.get(root)
        if run is not None:
            run.post_event(method, params)
        elif self._starting and root not in self._threads:
            early = self._early.setdefault(root, [])
            if len(early) < _MAX_EARLY:
                early.append((method, params))

    def _root(self, thread_id: str) -> str:
        return self._parents.get(thread_id, thread_id)

    def _approval_handler(self, method: str) -> Any:
        async def handle(params: JsonObject) -> JsonObject:
            if log.isEnabledFor(TRACE):
                log.log(TRACE, "app-server asked %s %s", method, params)
            approved = False
            try:
                thread_id = protocol.thread_id_of(params)
                run = self._runs.get(self._root(thread_id)) if thread_id else None
                if run is None:
                    log.warning("%s for a thread no call is running on: refused", method)
                else:
                    approved = await run.decide(method, params)
            except Exception:
                log.exception("%s failed: refused", method)
            return protocol.approval_answer(method, approved)

        return handle

    async def _on_mcp_elicitation(self, params: JsonObject) -> JsonObject:
        """An MCP server's elicitation, put to the caller of the call whose thread it came
        from; declined (with the reason logged) when nobody can answer it."""
        if log.isEnabledFor(TRACE):
            log.log(TRACE, "app-server asked %s %s", protocol.MCP_ELICITATION, params)
        server = params.get("serverName")
        thread_id = protocol.thread_id_of(params)
        run = self._runs.get(self._root(thread_id)) if thread_id else None
        request = protocol.mcp_elicitation_request(params)
        if run is None or run.elicit is None or run.abandoned or request is None:
            why = (
                "it has no MCP form"
                if request is None
                else "no call is running on its thread"
                if run is None or run.abandoned
                else "this call cannot ask its client"
            )
            log.warning("MCP server %r asked for input: declined, %s", server, why)
            return protocol.MCP_ELICITATION_DECLINED
        try:
            async with asyncio.timeout(self.approval_timeout):
                return protocol.mcp_elicitation_answer(await run.elicit(request))
        except Exception as exc:  # the caller's failure or silence is a refusal, never a hang
            reason = (
                f"no answer within {self.approval_timeout:g} s"
                if isinstance(exc, TimeoutError)
                else str(exc)
            )
            log.warning("MCP server %r asked for input: declined, %s", server, reason)
            return protocol.MCP_ELICITATION_DECLINED

    def _on_close(self, reason: str) -> None:
        if self._gone is not None:
            return
        self._gone = reason
        for run in list(self._runs.values()):
            run.post_gone(reason)
        self._runs.clear()

    # -- plumbing --------------------------------------------------------------------
    def _check_alive(self) -> None:
        if self._gone is not None:
            raise AppServerGone(self._gone)

    async def _request(self, method: str, params: JsonObject | None = None) -> JsonObject:
        if log.isEnabledFor(TRACE):
            log.log(TRACE, "asking app-server %s %s", method, params)
        try:
            return await self.connection.request(method, params, self.request_timeout)
        except McpError as exc:
            raise AppServerRequestFailed(
                method, exc.code, exc.message, protocol.thread_id_of(params or {})
            ) from None
        except AppServerGone as exc:  # named with the thread it hit
            raise AppServerGone(exc.message, protocol.thread_id_of(params or {})) from None
        except TimeoutError:
            raise AppServerRequestFailed(
                method, 0, f"no answer within {self.request_timeout:g} s"
            ) from None

    async def _notify(self, method: str, params: JsonObject | None = None) -> None:
        await self.connection.notify(method, params)  # AppServerGone when it is gone

    def _spawn(self, coro: Any) -> None:
        task = asyncio.get_running_loop().create_task(coro)
        self._background.add(task)
        task.add_done_callback(self._background.discard)
