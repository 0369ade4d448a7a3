"""Direct methods, conventions of the Go system we grew from (specs/direct-methods.md)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..errors import McpError
from ..jsonrpc import METHOD_NOT_FOUND, JsonObject
from ..provider import UnknownTool
from ..versions import LATEST_VERSION
from .table import MethodTable, concurrent

if TYPE_CHECKING:
    from ..context import RequestContext
    from ..session import ServerSession


async def capabilities(
    session: ServerSession, params: JsonObject, ctx: RequestContext
) -> JsonObject:
    core = session.core
    return {
        "protocolVersion": session.protocol_version or LATEST_VERSION,
        "serverInfo": core.server_info,
        "capabilities": core.capabilities(),
        "tools": list(await core.served.list_tools(ctx)),
    }


async def direct_tool_call(
    session: ServerSession, params: JsonObject, ctx: RequestContext
) -> JsonObject:
    """The fallback for methods not in the table: a tool's name calls that tool."""
    name = ctx.method
    arguments = {k: v for k, v in params.items() if k != "_meta"}
    try:
        return await session.core.served.call_tool(name, arguments, ctx)
    except UnknownTool as exc:
        if exc.name != name:
            raise
        raise McpError(METHOD_NOT_FOUND, f"Method not found: {name}") from None


METHODS: MethodTable = {"mcp.capabilities": concurrent(capabilities)}
