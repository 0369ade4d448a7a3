"""tasks/get, tasks/update, tasks/cancel of the tasks extension, for the caller's own tasks,
here or on another replica (specs/mcp-2026-07-28.md, 1.11; specs/scale.md)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..jsonrpc import JsonObject, invalid_params
from ..ready import Ready
from ..request_meta import TASKS_EXTENSION
from ..rounds import checked_answer
from ..tasks import RemoteTasks, unknown_task

if TYPE_CHECKING:
    from ..session import ServerSession
    from ..stateless_context import StatelessContext
    from ..tasks import TaskRecord


def _local(
    session: ServerSession, params: JsonObject, ctx: StatelessContext
) -> tuple[Any, TaskRecord | None, RemoteTasks | None]:
    """(the task id, this process's record of it or None, the shared store to ask)."""
    ctx.request_meta.require({"extensions": {TASKS_EXTENSION: {}}})
    store = session.core.tasks
    task_id = params.get("taskId")
    record = store.find(task_id, ctx.principal)
    if record is None and (store.remote is None or not isinstance(task_id, str)):
        raise unknown_task(task_id)
    return task_id, record, store.remote


async def _mirrored(remote: RemoteTasks, task_id: str, principal: str | None) -> JsonObject:
    detailed = await remote.get(task_id, principal)
    if detailed is None:
        raise unknown_task(task_id)
    return detailed


def get_task(session: ServerSession, params: JsonObject, ctx: StatelessContext) -> Any:
    task_id, record, remote = _local(session, params, ctx)
    if record is not None:
        return Ready(record.detailed())
    assert remote is not None
    return _mirrored(remote, task_id, ctx.principal)


def _responses(params: JsonObject) -> JsonObject:
    responses = params.get("inputResponses")
    if type(responses) is not dict:
        raise invalid_params("Invalid params: inputResponses must be an object")
    return responses


def update_task(session: ServerSession, params: JsonObject, ctx: StatelessContext) -> Any:
    task_id, record, remote = _local(session, params, ctx)
    responses = _responses(params)
    if record is not None:
        record.answer(responses, checked_answer)
        return Ready({})
    assert remote is not None
    return _update_remote(remote, task_id, responses, ctx.principal)


async def _update_remote(
    remote: RemoteTasks, task_id: str, responses: JsonObject, principal: str | None
) -> JsonObject:
    # Checked here, against the questions as mirrored, so a bad answer is this request's
    # -32602 as it would be on the task's own replica.
    waiting = (await _mirrored(remote, task_id, principal)).get("inputRequests") or {}
    for key, response in responses.items():
        asked = waiting.get(key)
        if type(asked) is dict:
            checked_answer(key, str(asked.get("method")), response)
    remote.update(task_id, responses)
    return {}


def cancel_task(session: ServerSession, params: JsonObject, ctx: StatelessContext) -> Any:
    task_id, record, remote = _local(session, params, ctx)
    if record is not None:
        record.cancel()  # cooperative; a finished task stays as it was
        return Ready({})
    assert remote is not None
    return _cancel_remote(remote, task_id, ctx.principal)


async def _cancel_remote(remote: RemoteTasks, task_id: str, principal: str | None) -> JsonObject:
    await _mirrored(remote, task_id, principal)  # the caller's, or -32602
    remote.cancel(task_id)
    return {}
