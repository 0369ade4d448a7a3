"""`subscriptions/listen` (2026-07-28): a stateless client's stream of notifications
(specs/mcp-2026-07-28.md, 1.8; across replicas: specs/scale.md)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any, Final

from .jsonrpc import JsonObject, RequestId
from .request_meta import SUBSCRIPTION_ID_KEY

ACKNOWLEDGED: Final = "notifications/subscriptions/acknowledged"
#: Filter flag -> the provider event kind it follows.
LIST_FLAGS: Final = {
    "toolsListChanged": "tools",
    "promptsListChanged": "prompts",
    "resourcesListChanged": "resources",
}

Notify = Callable[[str, JsonObject], None]


class Subscription:
    """One open listen request: what it asked for, and how to reach it."""

    __slots__ = ("closed", "id", "kinds", "notify", "resources", "tasks")

    def __init__(
        self,
        subscription_id: RequestId,
        notify: Notify,
        kinds: frozenset[str],
        resources: frozenset[str],
        tasks: frozenset[str],
    ) -> None:
        self.id = subscription_id
        self.notify = notify
        self.kinds = kinds
        self.resources = resources
        self.tasks = tasks
        #: Resolved when the server ends the subscription (shutdown).
        self.closed: asyncio.Future[None] = asyncio.get_running_loop().create_future()

    def tagged(self, params: JsonObject | None = None) -> JsonObject:
        """Notification params carrying this subscription's id."""
        out = dict(params or {})
        meta = out.get("_meta")
        out["_meta"] = {**(meta if type(meta) is dict else {}), SUBSCRIPTION_ID_KEY: self.id}
        return out


class SubscriptionHub:
    """Every open subscription of this process, fed by the core's events."""

    def __init__(self) -> None:
        self._open: set[Subscription] = set()

    def __len__(self) -> int:
        return len(self._open)

    def add(self, subscription: Subscription) -> None:
        self._open.add(subscription)

    def remove(self, subscription: Subscription) -> None:
        self._open.discard(subscription)

    def list_changed(self, kind: str) -> None:
        for sub in list(self._open):
            if kind in sub.kinds:
                sub.notify(f"notifications/{kind}/list_changed", sub.tagged())

    def resource_updated(self, uri: str) -> None:
        for sub in list(self._open):
            if uri in sub.resources:
                sub.notify("notifications/resources/updated", sub.tagged({"uri": uri}))

    def task_changed(self, task_id: str, detailed: Callable[[], JsonObject]) -> None:
        for sub in list(self._open):
            if task_id in sub.tasks:
                sub.notify("notifications/tasks", sub.tagged(detailed()))

    def close_all(self) -> None:
        """End every subscription gracefully (each listen request is answered)."""
        for sub in list(self._open):
            if not sub.closed.done():
                sub.closed.set_result(None)
        self._open.clear()


def honoured_filter(
    requested: JsonObject, features: frozenset[str], known_task: Callable[[Any], bool]
) -> tuple[JsonObject, frozenset[str], frozenset[str], frozenset[str]]:
    """The filter we acknowledge (the requested types we can send) and what it follows:
    list kinds, resource URIs and task ids."""
    honoured: JsonObject = {}
    kinds: set[str] = set()
    for flag, kind in LIST_FLAGS.items():
        if requested.get(flag) is True and kind in features:
            honoured[flag] = True
            kinds.add(kind)
    uris = requested.get("resourceSubscriptions")
    resources = frozenset(
        uri for uri in (uris if type(uris) is list else ()) if isinstance(uri, str)
    )
    if resources and "resources" in features:
        honoured["resourceSubscriptions"] = sorted(resources)
    else:
        resources = frozenset()
    ids = requested.get("taskIds")
    tasks = frozenset(
        task_id for task_id in (ids if type(ids) is list else ()) if known_task(task_id)
    )
    if type(ids) is list:
        honoured["taskIds"] = sorted(tasks)
    return honoured, frozenset(kinds), resources, tasks


__all__ = ["ACKNOWLEDGED", "Subscription", "SubscriptionHub", "honoured_filter"]
