from __future__ import annotations

from typing import TYPE_CHECKING

from ..jsonrpc import JsonObject
from ..provider import require_str
from .pagination import paginate
from .table import MethodTable, concurrent, inline

if TYPE_CHECKING:
    from ..context import RequestContext
    from ..session import ServerSession


async def list_resources(
    session: ServerSession, params: JsonObject, ctx: RequestContext
) -> JsonObject:
    resources = await session.core.provider.list_resources()
    return paginate(resources, params, session.core.page_size, "resources")


async def list_templates(
    session: ServerSession, params: JsonObject, ctx: RequestContext
) -> JsonObject:
    templates = await session.core.provider.list_resource_templates()
    return paginate(templates, params, session.core.page_size, "resourceTemplates")


async def read_resource(
    session: ServerSession, params: JsonObject, ctx: RequestContext
) -> JsonObject:
    uri = require_str(params, "uri")
    return {"contents": await session.core.provider.read_resource(uri, ctx)}


def subscribe(session: ServerSession, params: JsonObject, _: None) -> JsonObject:
    session.subscriptions.add(require_str(params, "uri"))
    return {}


def unsubscribe(session: ServerSession, params: JsonObject, _: None) -> JsonObject:
    session.subscriptions.discard(require_str(params, "uri"))
    return {}


METHODS: MethodTable = {
    "resources/list": concurrent(list_resources),
    "resources/templates/list": concurrent(list_templates),
    "resources/read": concurrent(read_resource),
    "resources/subscribe": inline(subscribe),
    "resources/unsubscribe": inline(unsubscribe),
}
