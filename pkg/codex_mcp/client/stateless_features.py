"""What the client does only with a server speaking 2026-07-28: follow a task to its
result, poll or cancel one, and open a subscriptions/listen stream. Client inherits it."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Sequence
from typing import Any

from codex_mcp.core.jsonrpc import JsonObject

from .errors import RequestTimeout
from .session import ClientSession
from .stateless import follow_task
from .subscription import Subscription, listen_filter

#: Seconds each task request (tasks/get, tasks/update, tasks/cancel) may take.
TASK_REQUEST_TIMEOUT = 30.0


class StatelessFeatures:
    session: ClientSession

    @property
    def is_stateless(self) -> bool:
        """Whether this client speaks 2026-07-28 with the server."""
        return self.session.stateless is not None

    async def _follow_task(self, created: JsonObject, timeout: float | None) -> JsonObject:
        """A tool call the server turned into a task: its result, when it has one. Past
        `timeout` the task is cancelled (tasks/cancel) and RequestTimeout raised."""

        def request(method: str, params: JsonObject) -> Any:
            return self.session.request(method, params, timeout=TASK_REQUEST_TIMEOUT)

        try:
            async with asyncio.timeout(timeout):
                return await follow_task(self.session, created, request)
        except TimeoutError:
            task_id = created.get("taskId")
            with contextlib.suppress(Exception):
                await request("tasks/cancel", {"taskId": task_id})
            raise RequestTimeout("tools/call", timeout or 0.0) from None

    async def get_task(self, task_id: str) -> JsonObject:
        """tasks/get: a task's status (and result, error or questions)."""
        return await self.session.request(
            "tasks/get", {"taskId": task_id}, timeout=TASK_REQUEST_TIMEOUT
        )

    async def cancel_task(self, task_id: str) -> None:
        await self.session.request(
            "tasks/cancel", {"taskId": task_id}, timeout=TASK_REQUEST_TIMEOUT
        )

    def listen(
        self,
        *,
        tools: bool = False,
        prompts: bool = False,
        resources: bool = False,
        resource_uris: Sequence[str] = (),
        task_ids: Sequence[str] = (),
    ) -> Subscription:
        """A 2026-07-28 subscriptions/listen stream: `async with client.listen(tools=True)
        as events: async for method, params in events: ...`."""
        return Subscription(
            self.session,
            listen_filter(
                tools=tools,
                prompts=prompts,
                resources=resources,
                resource_uris=resource_uris,
                task_ids=task_ids,
            ),
        )


__all__ = ["StatelessFeatures"]
