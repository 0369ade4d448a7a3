"""tasks/get, tasks/update, tasks/cancel (the tasks extension; see tasks.py). Each needs
the extension declared on the request itself (-32021 otherwise), and a task id of the
caller's (-32602 otherwise)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..jsonrpc import JsonObject, invalid_params
from ..ready import Ready
from ..request_meta import TASKS_EXTENSION
from ..rounds import checked_answer

if TYPE_CHECKING:
    from ..modern_context import ModernContext
    from ..session import ServerSession
    from ..tasks import TaskRecord


def _task(session: ServerSession, params: JsonObject, ctx: ModernContext) -> TaskRecord:
    ctx.request_meta.require({"extensions": {TASKS_EXTENSION: {}}})
    return session.core.tasks.get(params.get("taskId"), ctx.principal)


def get_task(session: ServerSession, params: JsonObject, ctx: ModernContext) -> Ready[JsonObject]:
    return Ready(_task(session, params, ctx).detailed())


def update_task(
    session: ServerSession, params: JsonObject, ctx: ModernContext
) -> Ready[JsonObject]:
    record = _task(session, params, ctx)
    responses = params.get("inputResponses")
    if type(responses) is not dict:
        raise invalid_params("Invalid params: inputResponses must be an object")
    record.answer(responses, checked_answer)
    return Ready({})


def cancel_task(
    session: ServerSession, params: JsonObject, ctx: ModernContext
) -> Ready[JsonObject]:
    _task(session, params, ctx).cancel()  # cooperative; a finished task stays as it was
    return Ready({})
