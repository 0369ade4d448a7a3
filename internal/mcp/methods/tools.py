from __future__ import annotations

from collections.abc import Awaitable
from typing import TYPE_CHECKING

from ..jsonrpc import JsonObject, invalid_params
from ..provider import require_str
from .pagination import paginate
from .table import MethodTable, concurrent

if TYPE_CHECKING:
    from collections.abc import Mapping

    from ..context import RequestContext
    from ..session import ServerSession
    from ..stateless_context import StatelessContext


async def list_tools(session: ServerSession, params: JsonObject, ctx: RequestContext) -> JsonObject:
    core = session.core
    tools = await core.served.list_tools(ctx)
    return paginate(tools, params, core.page_size, "tools", core.encoded_tools)


def call_tool(
    session: ServerSession, params: JsonObject, ctx: RequestContext
) -> Awaitable[JsonObject]:
    # Not a coroutine: it returns the tool's own awaitable, one layer less per call.
    name = params.get("name")
    if type(name) is not str:
        name = require_str(params, "name")  # says what is wrong (or takes a str subclass)
    arguments = params.get("arguments")
    if arguments is None:
        arguments = {}
    elif type(arguments) is not dict:
        raise invalid_params("'arguments' must be an object")
    return session.core.served.call_tool(name, arguments, ctx)


def stateless_call_tool(
    session: ServerSession, params: JsonObject, ctx: StatelessContext
) -> Awaitable[JsonObject]:
    """tools/call in the 2026-07-28 era: `call_tool`, after the HTTP routing check of the
    `Mcp-Param-*` headers that mirror the tool's `x-mcp-header` arguments."""
    headers = session.routing_headers
    if headers is None:  # stdio: no header layer
        return call_tool(session, params, ctx)
    return _call_with_headers(session, params, ctx, headers)


async def _call_with_headers(
    session: ServerSession, params: JsonObject, ctx: StatelessContext, headers: Mapping[str, str]
) -> JsonObject:
    annotated = await session.core.param_headers(require_str(params, "name"), ctx)
    if annotated:
        from ..routing_headers import check_param_headers  # loaded by the HTTP transport

        check_param_headers(headers, annotated, params.get("arguments"))
    return await call_tool(session, params, ctx)


METHODS: MethodTable = {"tools/list": concurrent(list_tools), "tools/call": concurrent(call_tool)}
