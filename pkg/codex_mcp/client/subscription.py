"""A 2026-07-28 `subscriptions/listen` stream, as an async iterator of notifications
(specs/client.md, "Defaults and eras")."""

from __future__ import annotations

import asyncio
import contextlib
from typing import TYPE_CHECKING, Any

from codex_mcp.core.jsonrpc import JsonObject, RequestId
from codex_mcp.core.peer import CallOptions
from codex_mcp.core.request_meta import SUBSCRIPTION_ID_KEY
from codex_mcp.core.subscriptions import ACKNOWLEDGED

from .errors import McpClientError

if TYPE_CHECKING:
    from .session import ClientSession

Event = tuple[str, JsonObject]


class Subscription:
    def __init__(self, session: ClientSession, notifications: JsonObject) -> None:
        self.session = session
        self.notifications = notifications
        #: The listen request's id (the subscription id its notifications carry).
        self.id: RequestId | None = None
        #: The notification types the server agreed to send.
        self.acknowledged: JsonObject = {}
        self._ack: asyncio.Future[JsonObject] | None = None
        self._events: asyncio.Queue[Event | None] = asyncio.Queue()
        self._request: asyncio.Task[JsonObject] | None = None

    def _route(self, method: str, params: JsonObject) -> None:
        meta = params.get("_meta")
        if (
            self.id is None
            or not isinstance(meta, dict)
            or meta.get(SUBSCRIPTION_ID_KEY) != self.id
        ):
            return
        if method == ACKNOWLEDGED:
            if self._ack is not None and not self._ack.done():
                notifications = params.get("notifications")
                self._ack.set_result(notifications if isinstance(notifications, dict) else {})
        else:
            self._events.put_nowait((method, params))

    async def __aenter__(self) -> Subscription:
        if self.session.stateless is None:
            raise McpClientError("subscriptions/listen needs a server speaking 2026-07-28")
        loop = asyncio.get_running_loop()
        self._ack = loop.create_future()
        self.session.notification_handlers.append(self._route)
        self.id = self.session.new_request_id()  # its notifications name it
        self._request = loop.create_task(
            self.session.request(
                "subscriptions/listen",
                {"notifications": self.notifications},
                CallOptions(request_id=self.id),
            )
        )
        self._request.add_done_callback(self._ended)
        try:
            done, _ = await asyncio.wait(
                {self._ack, self._request}, return_when=asyncio.FIRST_COMPLETED
            )
            if self._ack not in done:
                self._request.result()  # raises the server's refusal
                raise McpClientError("the server ended the subscription before acknowledging it")
            self.acknowledged = self._ack.result()
        except BaseException:
            await self._stop()
            raise
        return self

    def _ended(self, _: asyncio.Task[JsonObject]) -> None:
        self._events.put_nowait(None)  # the server ended it (or the connection closed)

    async def __aexit__(self, *exc_info: object) -> None:
        await self._stop()

    async def _stop(self) -> None:
        with contextlib.suppress(ValueError):
            self.session.notification_handlers.remove(self._route)
        if self._request is not None and not self._request.done():
            self._request.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._request

    def __aiter__(self) -> Subscription:
        return self

    async def __anext__(self) -> Event:
        event = await self._events.get()
        if event is None:
            raise StopAsyncIteration
        return event

    async def next(self, timeout: float | None = None) -> Event:
        """The next notification (TimeoutError after `timeout` seconds)."""
        async with asyncio.timeout(timeout):
            return await self.__anext__()


def listen_filter(
    *,
    tools: bool = False,
    prompts: bool = False,
    resources: bool = False,
    resource_uris: Any = (),
    task_ids: Any = (),
) -> JsonObject:
    notifications: JsonObject = {}
    if tools:
        notifications["toolsListChanged"] = True
    if prompts:
        notifications["promptsListChanged"] = True
    if resources:
        notifications["resourcesListChanged"] = True
    if resource_uris:
        notifications["resourceSubscriptions"] = list(resource_uris)
    if task_ids:
        notifications["taskIds"] = list(task_ids)
    return notifications


__all__ = ["Event", "Subscription", "listen_filter"]
