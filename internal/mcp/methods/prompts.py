from __future__ import annotations

from typing import TYPE_CHECKING

from ..jsonrpc import JsonObject, invalid_params
from ..provider import require_str
from .pagination import paginate
from .table import MethodTable, concurrent

if TYPE_CHECKING:
    from ..context import RequestContext
    from ..session import ServerSession


async def list_prompts(
    session: ServerSession, params: JsonObject, ctx: RequestContext
) -> JsonObject:
    prompts = await session.core.served.list_prompts(ctx)
    return paginate(prompts, params, session.core.page_size, "prompts")


async def get_prompt(session: ServerSession, params: JsonObject, ctx: RequestContext) -> JsonObject:
    name = require_str(params, "name")
    arguments = params.get("arguments") or {}
    if not isinstance(arguments, dict):
        raise invalid_params("'arguments' must be an object")
    return await session.core.served.get_prompt(name, arguments, ctx)


METHODS: MethodTable = {
    "prompts/list": concurrent(list_prompts),
    "prompts/get": concurrent(get_prompt),
}
