"""subscriptions/listen: acknowledge, then stay open carrying the notifications asked for
(see subscriptions.py); answered with an empty result when the server ends it."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..jsonrpc import JsonObject, invalid_params
from ..request_meta import SUBSCRIPTION_ID_KEY, TASKS_EXTENSION
from ..subscriptions import ACKNOWLEDGED, Subscription, honoured_filter

if TYPE_CHECKING:
    from ..session import ServerSession
    from ..stateless_context import StatelessContext


async def listen(session: ServerSession, params: JsonObject, ctx: StatelessContext) -> JsonObject:
    requested = params.get("notifications")
    if type(requested) is not dict:
        raise invalid_params("Invalid params: 'notifications' must be an object")
    if "taskIds" in requested:
        # Task status notifications need the tasks extension (ext-tasks, "Task Status
        # Notifications": a MUST).
        ctx.request_meta.require({"extensions": {TASKS_EXTENSION: {}}})
    core = session.core
    # Tasks another replica made are known from the store the replicas share.
    elsewhere: set[str] = set()
    remote = core.tasks.remote
    ids = requested.get("taskIds")
    if remote is not None and type(ids) is list:
        for task_id in ids:
            if (
                isinstance(task_id, str)
                and core.tasks.find(task_id, ctx.principal) is None
                and await remote.get(task_id, ctx.principal) is not None
            ):
                elsewhere.add(task_id)

    def known_task(task_id: Any) -> bool:
        return task_id in elsewhere or core.tasks.find(task_id, ctx.principal) is not None

    honoured, kinds, resources, tasks = honoured_filter(
        requested, core.provider.features, known_task
    )
    subscription_id = ctx.request_id
    assert subscription_id is not None
    subscription = Subscription(subscription_id, ctx.notify, kinds, resources, tasks)
    try:
        # A relay subscribes where the resources are first: once acknowledged, updates flow.
        await core.served.listen_started(subscription, ctx)
        # The first message of the subscription, before it can receive anything (the hub
        # is joined in the same loop turn: nothing is lost between).
        ctx.notify(
            ACKNOWLEDGED,
            {"_meta": {SUBSCRIPTION_ID_KEY: subscription_id}, "notifications": honoured},
        )
        core.subscriptions.add(subscription)
        await subscription.closed
    finally:
        core.subscriptions.remove(subscription)
        core.provider.listen_ended(subscription)
    return {"_meta": {SUBSCRIPTION_ID_KEY: subscription_id}}
