from __future__ import annotations

from collections.abc import Awaitable
from typing import TYPE_CHECKING

from ..jsonrpc import JsonObject, invalid_params
from ..provider import require_str
from .pagination import paginate
from .table import MethodTable, concurrent

if TYPE_CHECKING:
    from ..context import RequestContext
    from ..session import ServerSession


async def list_tools(session: ServerSession, params: JsonObject, ctx: RequestContext) -> JsonObject:
    core = session.core
    tools = await core.provider.list_tools(ctx)
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
    return session.core.provider.call_tool(name, arguments, ctx)


METHODS: MethodTable = {"tools/list": concurrent(list_tools), "tools/call": concurrent(call_tool)}
