"""One MCP `tools/call` of `codex` or `codex-reply`, run on a driver.

This is what a provider calls with the driver of the caller's session: it parses the
arguments, streams every event to the session as a `codex/event` notification (and as
progress when the caller asked for it), puts approvals to the caller as elicitations, and
returns the CallToolResult. Every failure is an `isError` result naming what went wrong;
cancelling the call (the task running this) interrupts its Codex turn.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from codex_mcp.core.jsonrpc import JsonObject
from codex_mcp.core.modern_context import ModernContext
from codex_mcp.core.provider import UnknownTool

from . import elicitation, events
from .errors import CodexError
from .protocol import ApprovalDetails, ApprovalKind
from .run import Approver, CodexEvent, EventCallback, TurnResult
from .tools import (
    CODEX,
    CODEX_REPLY,
    error_result,
    parse_codex_arguments,
    parse_reply_arguments,
    tool_result,
)

if TYPE_CHECKING:
    from codex_mcp.core.context import RequestContext

    from .driver import CodexDriver


class ElicitationUnsupported(Exception):
    pass


def event_forwarder(ctx: RequestContext) -> EventCallback:
    """Each event as `codex/event` on the caller's session, tagged with the call's id (and
    progress, when the call has a progress token)."""
    request_id = ctx.request_id
    notify = ctx.session.notify
    count = 0

    def forward(event: CodexEvent) -> Any:
        nonlocal count
        notify(events.METHOD, events.event_params(event, request_id), request_id)
        if ctx.progress_token is None:
            return None
        count += 1
        return ctx.report_progress(count, None, events.progress_message(event))

    return forward


def elicitation_approver(ctx: RequestContext) -> Approver:
    """Approvals put to the caller with `elicitation/create`; the driver's approval timeout
    bounds the wait (cancelling the elicitation when it expires)."""

    async def approve(kind: ApprovalKind, details: ApprovalDetails) -> bool:
        if isinstance(ctx, ModernContext):
            raise ElicitationUnsupported(
                "a 2026-07-28 request cannot be asked for approval while its turn runs (the "
                "revision has no server-to-client requests, and answering input-required "
                "would start the turn again); use approval-policy `never` with a sandbox, or "
                "a session (initialize) to approve commands"
            )
        if "elicitation" not in ctx.client_capabilities:
            raise ElicitationUnsupported(
                "the MCP client did not declare the elicitation capability, so it cannot "
                "approve commands; use approval-policy `never` with a sandbox instead"
            )
        params = elicitation.approval_request(kind, details, ctx.request_id)
        return elicitation.approved(await ctx.request("elicitation/create", params))

    return approve


async def call_tool(
    driver: CodexDriver, name: str, arguments: JsonObject, ctx: RequestContext
) -> JsonObject:
    """The CallToolResult of one call. Raises UnknownTool for other names (a -32602)."""
    if name not in (CODEX, CODEX_REPLY):
        raise UnknownTool(name)
    on_event, approve = event_forwarder(ctx), elicitation_approver(ctx)
    try:
        result: TurnResult
        if name == CODEX:
            prompt, options = parse_codex_arguments(arguments)
            result = await driver.codex(prompt, options, on_event=on_event, approve=approve)
        else:
            thread_id, prompt = parse_reply_arguments(arguments)
            result = await driver.reply(thread_id, prompt, on_event=on_event, approve=approve)
    except CodexError as exc:
        return error_result(exc)
    return tool_result(result)
