"""The Skills extension's methods (SEP-2640; specs/skills.md): skills/list, skills/get and
resources/directory/read, the same handlers in both eras."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..errors import McpError
from ..jsonrpc import METHOD_NOT_FOUND, JsonObject, invalid_params
from ..provider import require_str
from .pagination import paginate
from .table import MethodTable, concurrent

if TYPE_CHECKING:
    from ..context import RequestContext
    from ..session import ServerSession


def _served(session: ServerSession, feature: str, method: str) -> None:
    """A server that serves no skills (or no directories) does not know the method."""
    if feature not in session.core.provider.features:
        raise McpError(METHOD_NOT_FOUND, f"Method not found: {method}")


def _cacheable(session: ServerSession, result: JsonObject) -> JsonObject:
    """ttlMs and cacheScope on a skills result whatever the revision: the extension's
    schema requires them (decision in specs/skills.md). A stateless request's own hints,
    set by the provider, win over these when the era's `finish` stamps the result."""
    core = session.core
    result.setdefault("ttlMs", core.cache_ttl_ms)
    result.setdefault("cacheScope", core.cache_scope)
    return result


async def list_skills(
    session: ServerSession, params: JsonObject, ctx: RequestContext
) -> JsonObject:
    _served(session, "skills", "skills/list")
    skills = await session.core.served.list_skills(ctx)
    return _cacheable(session, paginate(skills, params, session.core.page_size, "skills"))


async def get_skill(session: ServerSession, params: JsonObject, ctx: RequestContext) -> JsonObject:
    _served(session, "skills", "skills/get")
    uri = require_str(params, "uri")
    return _cacheable(session, {"skill": await session.core.served.get_skill(uri, ctx)})


async def read_directory(
    session: ServerSession, params: JsonObject, ctx: RequestContext
) -> JsonObject:
    _served(session, "directories", "resources/directory/read")
    uri = require_str(params, "uri")
    cursor = params.get("cursor")
    if cursor is not None and not isinstance(cursor, str):
        raise invalid_params("'cursor' must be a string")
    children = await session.core.served.read_directory(uri, ctx)
    return _cacheable(session, paginate(children, params, session.core.page_size, "resources"))


METHODS: MethodTable = {
    "skills/list": concurrent(list_skills),
    "skills/get": concurrent(get_skill),
    "resources/directory/read": concurrent(read_directory),
}
