"""Driver routing at orderings the real app-server produces only sometimes: a scripted peer
behind the connection seam decides exactly when each message arrives."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import pytest
from codex_mcp.codex.connection import CloseCallback, NotificationCallback, RequestHandler
from codex_mcp.codex.driver import CodexDriver
from codex_mcp.codex.protocol import ApprovalDetails, ApprovalKind
from codex_mcp.codex.run import CodexEvent
from codex_mcp.core.jsonrpc import JsonObject


class ScriptedAppServer:
    """An `AppServerConnection` whose answers and notifications come from the test.
    `script[method](params)` returns (result, notifications to send right after it)."""

    def __init__(self) -> None:
        self.notify_driver: NotificationCallback | None = None
        self.handlers: dict[str, RequestHandler] = {}
        self.sent: list[tuple[str, JsonObject | None]] = []
        self.script: dict[str, Callable[[JsonObject], tuple[JsonObject, list[Any]]]] = {
            "initialize": lambda _p: ({}, []),
        }

    async def request(
        self, method: str, params: JsonObject | None = None, timeout: float | None = None
    ) -> JsonObject:
        self.sent.append((method, params))
        result, notifications = self.script[method](params or {})
        answer: asyncio.Future[JsonObject] = asyncio.get_running_loop().create_future()

        def arrive() -> None:
            # The answer and the notifications behind it arrive in one read, before the
            # caller of request() gets to run again: what a real pipe does now and then.
            answer.set_result(result)
            assert self.notify_driver is not None
            for notification_method, notification_params in notifications:
                self.notify_driver(notification_method, notification_params)

        asyncio.get_running_loop().call_soon(arrive)
        return await answer

    async def notify(self, method: str, params: JsonObject | None = None) -> None:
        self.sent.append((method, params))

    def on_notification(self, callback: NotificationCallback) -> None:
        self.notify_driver = callback

    def handle_requests(self, method: str, handler: RequestHandler) -> None:
        self.handlers[method] = handler

    def on_close(self, callback: CloseCallback) -> None:
        pass

    async def close(self) -> None:
        pass


def turn(status: str, text: str | None = None) -> JsonObject:
    items = [{"type": "agentMessage", "id": "m1", "text": text}] if text else []
    return {"id": "turn-1", "status": status, "items": items, "error": None}


@pytest.fixture
async def scripted() -> tuple[ScriptedAppServer, CodexDriver]:
    server = ScriptedAppServer()
    driver = CodexDriver(server)
    await driver.start()
    return server, driver


async def test_thread_started_arriving_with_the_answer_is_not_lost(
    scripted: tuple[ScriptedAppServer, CodexDriver],
) -> None:
    server, driver = scripted
    server.script["thread/start"] = lambda _p: (
        {"thread": {"id": "thread-1"}},
        [("thread/started", {"thread": {"id": "thread-1"}})],
    )
    server.script["turn/start"] = lambda _p: (
        {"turn": {"id": "turn-1"}},
        [("turn/completed", {"threadId": "thread-1", "turn": turn("completed", "done")})],
    )
    events: list[CodexEvent] = []
    result = await driver.codex("hi", on_event=events.append)
    assert result.content == "done"
    assert [event.method for event in events] == ["thread/started", "turn/completed"]


async def test_a_sub_agents_events_and_approvals_go_to_the_call_that_spawned_it(
    scripted: tuple[ScriptedAppServer, CodexDriver],
) -> None:
    server, driver = scripted
    server.script["thread/start"] = lambda _p: ({"thread": {"id": "parent"}}, [])
    child = {"thread": {"id": "child", "parentThreadId": "parent"}}
    server.script["turn/start"] = lambda _p: (
        {"turn": {"id": "turn-1"}},
        [("thread/started", child), ("item/started", {"threadId": "child", "item": {}})],
    )
    events: list[CodexEvent] = []
    asked: list[ApprovalDetails] = []
    answered: asyncio.Future[JsonObject] = asyncio.get_running_loop().create_future()

    async def approve(kind: ApprovalKind, details: ApprovalDetails) -> bool:
        asked.append(details)
        return True

    call = asyncio.create_task(driver.codex("spawn", on_event=events.append, approve=approve))
    async with asyncio.timeout(5):
        while len(events) < 2:  # thread/started of the child, then its item
            await asyncio.sleep(0.01)
    request = {"threadId": "child", "turnId": "t", "itemId": "i", "command": "ls", "cwd": "/"}
    handler = server.handlers["item/commandExecution/requestApproval"]
    answered.set_result(await handler(request))
    assert answered.result() == {"decision": "accept"}
    assert [details.thread_id for details in asked] == ["child"]
    assert server.notify_driver is not None
    server.notify_driver("turn/completed", {"threadId": "parent", "turn": turn("completed")})
    await call
    assert {event.thread_id for event in events} == {"parent"}


@pytest.mark.parametrize(
    ("method", "refusal"),
    [
        ("item/commandExecution/requestApproval", {"decision": "cancel"}),
        ("item/fileChange/requestApproval", {"decision": "cancel"}),
        ("execCommandApproval", {"decision": "abort"}),
        ("applyPatchApproval", {"decision": "abort"}),
        ("mcpServer/elicitation/request", {"action": "decline", "content": None, "_meta": None}),
    ],
)
async def test_requests_nobody_is_waiting_for_are_refused_at_once(
    scripted: tuple[ScriptedAppServer, CodexDriver], method: str, refusal: JsonObject
) -> None:
    server, _ = scripted
    answer = await asyncio.wait_for(server.handlers[method]({"threadId": "nobody's"}), 1)
    assert answer == refusal
