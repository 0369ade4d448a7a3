from __future__ import annotations

from typing import TYPE_CHECKING

from ..jsonrpc import JsonObject
from ..provider import require_str
from .pagination import paginate
from .table import MethodTable, concurrent

if TYPE_CHECKING:
    from ..context import RequestContext
    from ..session import ServerSession


async def list_resources(
    session: ServerSession, params: JsonObject, ctx: RequestContext
) -> JsonObject:
    resources = await session.core.served.list_resources(ctx)
    return paginate(resources, params, session.core.page_size, "resources")


async def list_templates(
    session: ServerSession, params: JsonObject, ctx: RequestContext
) -> JsonObject:
    templates = await session.core.served.list_resource_templates(ctx)
    return paginate(templates, params, session.core.page_size, "resourceTemplates")


async def read_resource(
    session: ServerSession, params: JsonObject, ctx: RequestContext
) -> JsonObject:
    uri = require_str(params, "uri")
    return {"contents": await session.core.served.read_resource(uri, ctx)}


async def subscribe(session: ServerSession, params: JsonObject, ctx: RequestContext) -> JsonObject:
    uri = require_str(params, "uri")
    # The provider first: a subscription it refuses, or keeps nothing of (a policy's hidden
    # resource, answered as any subscribe), is not kept.
    if await session.core.served.subscribe(uri, ctx) is False:
        return {}
    if uri not in session.subscriptions:
        session.subscriptions.add(uri)
        session.state_changed()
    return {}


async def unsubscribe(
    session: ServerSession, params: JsonObject, ctx: RequestContext
) -> JsonObject:
    uri = require_str(params, "uri")
    if uri in session.subscriptions:
        session.subscriptions.discard(uri)
        session.state_changed()
    await session.core.provider.unsubscribe(uri, ctx)
    return {}


METHODS: MethodTable = {
    "resources/list": concurrent(list_resources),
    "resources/templates/list": concurrent(list_templates),
    "resources/read": concurrent(read_resource),
    "resources/subscribe": concurrent(subscribe),
    "resources/unsubscribe": concurrent(unsubscribe),
}
