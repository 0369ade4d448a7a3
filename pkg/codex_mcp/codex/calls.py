"""One MCP `tools/call` of `codex` or `codex-reply`, run on a driver (specs/codex-tools.md,
"What we serve")."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

from codex_mcp.core.jsonrpc import JsonObject
from codex_mcp.core.provider import UnknownTool
from codex_mcp.core.versions import Revision

from . import elicitation, events
from .bounds import CodexBounds
from .errors import CodexError, ElicitationUnsupported
from .protocol import ApprovalDetails, ApprovalKind, ThreadOptions
from .run import Approver, CodexEvent, Elicitor, EventCallback, TurnResult
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
        if ctx.revision is Revision.STATELESS:
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


def elicitation_forwarder(ctx: RequestContext) -> Elicitor:
    """The elicitations of Codex's own MCP servers (its approval of an MCP tool call among
    them) put to the caller as they are; a caller that cannot be asked makes them declined."""

    async def elicit(request: JsonObject) -> JsonObject:
        if ctx.revision is Revision.STATELESS:
            raise ElicitationUnsupported("a 2026-07-28 request cannot be asked while its turn runs")
        declared = ctx.client_capabilities.get("elicitation")
        if not isinstance(declared, dict):
            raise ElicitationUnsupported("the MCP client did not declare elicitation")
        if request.get("mode") == "url" and "url" not in declared:
            raise ElicitationUnsupported("the MCP client did not declare URL elicitation")
        return await ctx.request("elicitation/create", request)

    return elicit


@dataclass(frozen=True, slots=True)
class CodexCall:
    prompt: str
    options: ThreadOptions
    tool: ClassVar[str] = CODEX


@dataclass(frozen=True, slots=True)
class ReplyCall:
    thread_id: str
    prompt: str
    tool: ClassVar[str] = CODEX_REPLY


def read_call(
    name: str,
    arguments: JsonObject,
    bounds: CodexBounds | None = None,
    scopes: frozenset[str] | None = None,
) -> CodexCall | ReplyCall:
    """A call's arguments, parsed, and for `codex` held to the operator's bounds (for the
    caller's OAuth scopes). Raises CodexError (InvalidCodexArguments, OutOfBounds): the caller's
    mistake, answered before any app-server is started or asked; UnknownTool for other
    names."""
    if name == CODEX:
        prompt, options = parse_codex_arguments(arguments)
        if bounds is not None and not bounds.unbounded:
            raw_cwd = arguments.get("cwd")
            options = bounds.apply(options, scopes, raw_cwd if isinstance(raw_cwd, str) else None)
        return CodexCall(prompt, options)
    if name == CODEX_REPLY:
        thread_id, prompt = parse_reply_arguments(arguments)
        return ReplyCall(thread_id, prompt)
    raise UnknownTool(name)


async def run_call(
    driver: CodexDriver, call: CodexCall | ReplyCall, ctx: RequestContext
) -> JsonObject:
    """The CallToolResult of one call read by `read_call`."""
    on_event, approve = event_forwarder(ctx), elicitation_approver(ctx)
    elicit = elicitation_forwarder(ctx)
    try:
        result: TurnResult
        if isinstance(call, CodexCall):
            result = await driver.codex(
                call.prompt, call.options, on_event=on_event, approve=approve, elicit=elicit
            )
        else:
            result = await driver.reply(
                call.thread_id, call.prompt, on_event=on_event, approve=approve, elicit=elicit
            )
    except CodexError as exc:
        return error_result(exc)
    return tool_result(result)
