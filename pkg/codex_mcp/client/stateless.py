"""The client's side of MCP 2026-07-28: the envelope on every request, input-required
rounds and tasks (specs/client.md, "Defaults and eras")."""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any, Final

from codex_mcp.core.errors import McpError
from codex_mcp.core.jsonrpc import JsonObject
from codex_mcp.core.peer import CallOptions, JsonRpcPeer
from codex_mcp.core.request_meta import (
    CLIENT_CAPABILITIES_KEY,
    CLIENT_INFO_KEY,
    HEADER_MISMATCH,
    LOG_LEVEL_KEY,
    MISSING_REQUIRED_CLIENT_CAPABILITY,
    PROTOCOL_VERSION_KEY,
    RESULT_COMPLETE,
    RESULT_INPUT_REQUIRED,
    RESULT_TASK,
    SERVER_INFO_KEY,
    TASKS_EXTENSION,
    UNSUPPORTED_PROTOCOL_VERSION,
)

from .errors import McpClientError

#: Errors only a stateless server answers with: a server that sends one speaks the revision
#: (basic/versioning.mdx, "Backward Compatibility"), so the client does not fall back.
STATELESS_ERRORS: Final = frozenset(
    {HEADER_MISMATCH, MISSING_REQUIRED_CLIENT_CAPABILITY, UNSUPPORTED_PROTOCOL_VERSION}
)
#: Rounds one request may take before we give up (the official SDK's cap too).
MAX_ROUNDS: Final = 10


class AnsweringPeer(JsonRpcPeer):
    """A peer that answers a server's input requests (the client's session): what rounds
    and tasks need of it, declared here so that this module does not import the session."""

    async def answer_input(self, method: str, params: JsonObject) -> JsonObject:
        raise NotImplementedError


@dataclass(frozen=True, slots=True)
class StatelessProfile:
    """How this client speaks 2026-07-28 to one server."""

    version: str
    client_info: JsonObject
    capabilities: JsonObject
    log_level: str | None = None

    @property
    def meta(self) -> JsonObject:
        meta: JsonObject = {
            PROTOCOL_VERSION_KEY: self.version,
            CLIENT_INFO_KEY: self.client_info,
            CLIENT_CAPABILITIES_KEY: self.capabilities,
        }
        if self.log_level is not None:
            meta[LOG_LEVEL_KEY] = self.log_level
        return meta

    def stamp(self, options: CallOptions, cancel_by_notification: bool) -> CallOptions:
        """The request's options with the envelope in its `_meta` (the caller's keys,
        a progress token say, kept). Over HTTP closing the stream cancels, so no
        notifications/cancelled is sent there."""
        return dataclasses.replace(
            options,
            meta={**self.meta, **(options.meta or {})},
            cancel_on_abandon=options.cancel_on_abandon and cancel_by_notification,
        )


def stateless_capabilities(capabilities: JsonObject) -> JsonObject:
    """What a stateless request declares: the client's capabilities, and the tasks
    extension (this client follows tasks to their end)."""
    extensions = capabilities.get("extensions")
    return {
        **capabilities,
        "extensions": {**(extensions if isinstance(extensions, dict) else {}), TASKS_EXTENSION: {}},
    }


def server_info_of(result: JsonObject) -> JsonObject:
    meta = result.get("_meta")
    info = meta.get(SERVER_INFO_KEY) if isinstance(meta, dict) else None
    return info if isinstance(info, dict) else {}


def is_stateless_error(exc: BaseException) -> bool:
    return isinstance(exc, McpError) and exc.code in STATELESS_ERRORS


async def answer_inputs(session: AnsweringPeer, requests: Mapping[str, Any]) -> JsonObject:
    """Answers to the server's input requests, all asked at once, through the handlers
    that answer the same requests from a legacy server."""
    keys = list(requests)
    answers = await asyncio.gather(*(_answer_one(session, requests[key]) for key in keys))
    return dict(zip(keys, answers, strict=True))


async def _answer_one(session: AnsweringPeer, request: Any) -> JsonObject:
    method = request.get("method") if isinstance(request, dict) else None
    params = request.get("params") if isinstance(request, dict) else None
    if not isinstance(method, str):
        raise McpClientError(f"the server sent a malformed input request: {request!r:.200}")
    return await session.answer_input(method, params if isinstance(params, dict) else {})


async def settle(
    session: AnsweringPeer,
    method: str,
    params: JsonObject | None,
    options: CallOptions,
    result: JsonObject,
) -> JsonObject:
    """Drive input-required rounds until the request's result is complete (or a task)."""
    delay = 0.05
    for _ in range(MAX_ROUNDS):
        kind = result.get("resultType", RESULT_COMPLETE)
        if kind in (RESULT_COMPLETE, RESULT_TASK):
            return result
        if kind != RESULT_INPUT_REQUIRED:
            raise McpClientError(f"{method}: the server answered an unknown resultType {kind!r}")
        retry = {
            key: value
            for key, value in (params or {}).items()
            if key not in ("inputResponses", "requestState")
        }
        requests = result.get("inputRequests")
        if isinstance(requests, dict) and requests:
            retry["inputResponses"] = await answer_inputs(session, requests)
        else:  # a state alone means "retry later" (load shedding)
            await asyncio.sleep(delay)
            delay = min(delay * 2, 0.25)
        state = result.get("requestState")
        if isinstance(state, str):
            retry["requestState"] = state  # echoed exactly; never one we did not receive
        result = await JsonRpcPeer.request(session, method, retry, options)
    raise McpClientError(f"{method}: still asking for input after {MAX_ROUNDS} rounds")


async def follow_task(
    session: AnsweringPeer,
    created: JsonObject,
    request: Callable[[str, JsonObject], Awaitable[JsonObject]],
) -> JsonObject:
    """The result of a task: polled with tasks/get (at its pollIntervalMs), its
    questions answered with tasks/update. A failed task raises its JSON-RPC error."""
    task_id = created.get("taskId")
    if not isinstance(task_id, str):
        raise McpClientError("the server answered resultType task without a taskId")
    answered: set[str] = set()
    task = created
    while True:
        status = task.get("status")
        if status == "completed":
            final = task.get("result")
            return final if isinstance(final, dict) else {}
        if status == "failed":
            found = task.get("error")
            error: JsonObject = found if isinstance(found, dict) else {}
            raise McpError(
                int(error.get("code", -32603)),
                str(error.get("message", "the task failed")),
                error.get("data"),
                "tools/call",
            )
        if status == "cancelled":
            raise McpClientError(f"task {task_id} was cancelled")
        waiting = task.get("inputRequests") if status == "input_required" else None
        fresh = {
            key: value
            for key, value in (waiting.items() if isinstance(waiting, dict) else ())
            if key not in answered
        }
        if fresh:
            responses = await answer_inputs(session, fresh)
            answered.update(fresh)
            await request("tasks/update", {"taskId": task_id, "inputResponses": responses})
        else:
            interval = task.get("pollIntervalMs")
            seconds = interval / 1000 if isinstance(interval, int | float) else 0.5
            await asyncio.sleep(min(max(seconds, 0.05), 5.0))
        task = await request("tasks/get", {"taskId": task_id})


__all__ = [
    "MAX_ROUNDS",
    "STATELESS_ERRORS",
    "StatelessProfile",
    "answer_inputs",
    "follow_task",
    "is_stateless_error",
    "server_info_of",
    "settle",
    "stateless_capabilities",
]
