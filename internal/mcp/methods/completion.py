from __future__ import annotations

from typing import TYPE_CHECKING

from ..jsonrpc import JsonObject, invalid_params
from .table import MethodTable, concurrent

if TYPE_CHECKING:
    from ..context import RequestContext
    from ..session import ServerSession

MAX_VALUES = 100  # the spec's cap per response


async def complete(session: ServerSession, params: JsonObject, ctx: RequestContext) -> JsonObject:
    ref = params.get("ref")
    argument = params.get("argument")
    if not isinstance(ref, dict) or ref.get("type") not in ("ref/prompt", "ref/resource"):
        raise invalid_params("'ref' must be a ref/prompt or ref/resource object")
    if not isinstance(argument, dict) or not isinstance(argument.get("name"), str):
        raise invalid_params("'argument' must be an object with a 'name'")
    context = params.get("context") or {}
    context_arguments = context.get("arguments") if isinstance(context, dict) else None
    completion = await session.core.served.complete(
        ref, argument, context_arguments if isinstance(context_arguments, dict) else {}, ctx
    )
    if completion is None:
        return {"completion": {"values": [], "hasMore": False}}
    values = list(completion.get("values", []))
    if len(values) > MAX_VALUES:
        completion = {**completion, "values": values[:MAX_VALUES], "hasMore": True}
        completion.setdefault("total", len(values))
    return {"completion": completion}


METHODS: MethodTable = {"completion/complete": concurrent(complete)}
