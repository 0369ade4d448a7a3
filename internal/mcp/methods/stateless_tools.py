"""tools/call in the 2026-07-28 era: the legacy handler, after the HTTP routing check of
the `Mcp-Param-*` headers that mirror the tool's `x-mcp-header` arguments."""

from __future__ import annotations

from collections.abc import Awaitable
from typing import TYPE_CHECKING

from ..jsonrpc import JsonObject
from ..provider import require_str
from ..routing_headers import check_param_headers
from . import tools

if TYPE_CHECKING:
    from collections.abc import Mapping

    from ..session import ServerSession
    from ..stateless_context import StatelessContext


def call_tool(
    session: ServerSession, params: JsonObject, ctx: StatelessContext
) -> Awaitable[JsonObject]:
    headers = session.routing_headers
    if headers is None:  # stdio: no header layer
        return tools.call_tool(session, params, ctx)
    return _call_with_headers(session, params, ctx, headers)


async def _call_with_headers(
    session: ServerSession, params: JsonObject, ctx: StatelessContext, headers: Mapping[str, str]
) -> JsonObject:
    annotated = await session.core.param_headers(require_str(params, "name"), ctx)
    if annotated:
        check_param_headers(headers, annotated, params.get("arguments"))
    return await tools.call_tool(session, params, ctx)
