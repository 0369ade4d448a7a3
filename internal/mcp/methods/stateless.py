"""The 2026-07-28 era's methods, served per request without a handshake (`STATELESS_ENTRY`;
specs/design.md, "Two eras on one server")."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, Final

from ..errors import McpError
from ..jsonrpc import METHOD_NOT_FOUND, JsonObject
from ..peer import Claim, MethodEntry
from ..ready import Ready
from ..request_meta import (
    CLIENT_CAPABILITIES_KEY,
    CLIENT_INFO_KEY,
    LOG_LEVEL_KEY,
    PROTOCOL_VERSION_KEY,
    RESULT_COMPLETE,
    RESULT_INPUT_REQUIRED,
    SERVER_INFO_KEY,
    STATELESS_ONLY_METHODS,
    parse_request_meta,
)
from ..request_state import ReplayedRequestState
from ..rounds import ROUND_METHODS, InputRequired, Rounds
from ..stateless_context import StatelessContext
from ..versions import STATELESS_VERSIONS
from . import completion, listen, prompts, resources, skills, task_methods, tools

if TYPE_CHECKING:
    from ..session import ServerSession

StatelessHandler = Callable[["ServerSession", JsonObject, StatelessContext], Any]

#: The results a client may cache, and so carry ttlMs and cacheScope (caching.mdx).
CACHEABLE: Final = frozenset(
    {
        "server/discover",
        "tools/list",
        "prompts/list",
        "resources/list",
        "resources/templates/list",
        "resources/read",
        "skills/list",
        "skills/get",
        "resources/directory/read",
    }
)


def discover(
    session: ServerSession, params: JsonObject, ctx: StatelessContext
) -> Ready[JsonObject] | Awaitable[JsonObject]:
    """What the server offers; after what the extensions' handshakes wait for (a gateway's
    children's first start), as `initialize` is."""
    waits = session.core.ready(session)
    if waits:
        return _discovered_after(waits, session)
    return Ready(_discovered(session))


async def _discovered_after(waits: list[Awaitable[None]], session: ServerSession) -> JsonObject:
    for wait in waits:
        await wait
    return _discovered(session)


def _discovered(session: ServerSession) -> JsonObject:
    core = session.core
    result: JsonObject = {
        # Only the versions spoken per request: a client puts one of these in `_meta`
        # (legacy versions are spoken through `initialize`, which it may still send).
        "supportedVersions": list(STATELESS_VERSIONS),
        "capabilities": core.stateless_capabilities(),
    }
    if core.instructions:
        result["instructions"] = core.instructions
    return result


#: method -> (handler, the provider feature it needs; None: always served)
METHODS: Final[dict[str, tuple[StatelessHandler, str | None]]] = {
    "server/discover": (discover, None),
    "tools/list": (tools.list_tools, "tools"),
    "tools/call": (tools.stateless_call_tool, "tools"),
    "resources/list": (resources.list_resources, "resources"),
    "resources/templates/list": (resources.list_templates, "resources"),
    "resources/read": (resources.read_resource, "resources"),
    "prompts/list": (prompts.list_prompts, "prompts"),
    "prompts/get": (prompts.get_prompt, "prompts"),
    "completion/complete": (completion.complete, "completions"),
    "subscriptions/listen": (listen.listen, None),
    "skills/list": (skills.list_skills, "skills"),
    "skills/get": (skills.get_skill, "skills"),
    "resources/directory/read": (skills.read_directory, "directories"),
    "tasks/get": (task_methods.get_task, None),
    "tasks/update": (task_methods.update_task, None),
    "tasks/cancel": (task_methods.cancel_task, None),
}


def dispatch(
    session: ServerSession, params: JsonObject, ctx: StatelessContext
) -> Ready[JsonObject] | Awaitable[JsonObject]:
    """Serve one stateless request (checks first, so a bad one is answered without a task)."""
    ctx.request_meta = parse_request_meta(params)
    found = METHODS.get(ctx.method)
    if found is None or (found[1] is not None and found[1] not in session.core.provider.features):
        raise McpError(METHOD_NOT_FOUND, f"Method not found: {ctx.method}")
    handler = found[0]
    if ctx.method in ROUND_METHODS:
        core = session.core
        shared = core.shared_nonces
        ctx.rounds = Rounds.start(
            ctx.method, params, core.request_states, ctx.principal, consume=shared is None
        )
        if shared is not None and ctx.rounds.unclaimed is not None:
            return _claimed(shared, ctx.rounds.unclaimed, handler, session, params, ctx)
    work = handler(session, params, ctx)
    if type(work) is Ready:
        return Ready(finish(ctx, params, work.value))
    return _finished(ctx, params, work)


async def _claimed(
    shared: Callable[[str, float], Awaitable[bool]],
    unclaimed: tuple[str, float],
    handler: StatelessHandler,
    session: ServerSession,
    params: JsonObject,
    ctx: StatelessContext,
) -> JsonObject:
    """A retry whose state must first be claimed in the replay cache replicas share."""
    if not await shared(*unclaimed):
        raise ReplayedRequestState("it was already used; start the request again")
    work = handler(session, params, ctx)
    if type(work) is Ready:
        return finish(ctx, params, work.value)
    result: JsonObject = await _finished(ctx, params, work)
    return result


async def _finished(ctx: StatelessContext, params: JsonObject, work: Awaitable[JsonObject]) -> Any:
    try:
        result = await work
    except InputRequired:
        # Let questions asked at the same time (asyncio.gather) register theirs too.
        await asyncio.sleep(0)
        assert ctx.rounds is not None
        core = ctx.core
        result = ctx.rounds.result(ctx.method, params, core.request_states, ctx.principal)
    return finish(ctx, params, result)


def finish(ctx: StatelessContext, params: JsonObject, result: JsonObject) -> JsonObject:
    """A result as the era wants it: `resultType`, `serverInfo`, and cache hints on a
    complete cacheable result. Never mutates `result` (a provider may reuse it)."""
    core = ctx.core
    out = dict(result)
    kind = out.setdefault("resultType", RESULT_COMPLETE)
    meta = out.get("_meta")
    out["_meta"] = {**(meta if type(meta) is dict else {}), SERVER_INFO_KEY: core.server_info}
    if kind == RESULT_COMPLETE and ctx.method in CACHEABLE:
        ttl_ms, scope = ctx.cache_hints or (None, None)
        out["ttlMs"] = core.cache_ttl_ms if ttl_ms is None else ttl_ms
        out["cacheScope"] = core.cache_scope if scope is None else scope
    elif kind == RESULT_INPUT_REQUIRED:
        out.pop("ttlMs", None)  # never cached (caching.mdx)
        out.pop("cacheScope", None)
    return out


#: Serves every stateless request.
STATELESS_ENTRY: Final = MethodEntry(dispatch, inline=False, context_class=StatelessContext)


def claim_for(entry: MethodEntry) -> Claim:
    """A dual-era session's choice for a request that carries `_meta`: `entry` (the stateless
    entry, as the core composed it) when the `_meta` holds the envelope (any key of it), else
    None (the method table, where the stateless-only methods map to that entry too). It
    reads only locals and allocates nothing; a request without `_meta` never gets here."""

    def claim(
        method: str,
        meta: JsonObject,
        _version: str = PROTOCOL_VERSION_KEY,
        _capabilities: str = CLIENT_CAPABILITIES_KEY,
        _info: str = CLIENT_INFO_KEY,
        _level: str = LOG_LEVEL_KEY,
        _entry: MethodEntry = entry,
    ) -> MethodEntry | None:
        if _version in meta or _capabilities in meta or _info in meta or _level in meta:
            return _entry
        return None

    return claim


claim_stateless: Final = claim_for(STATELESS_ENTRY)


#: The methods only the stateless era has, served by the stateless entry whatever `_meta` says
#: (so a bare `server/discover` is told what its envelope lacks).
STATELESS_ONLY: dict[str, MethodEntry] = dict.fromkeys(STATELESS_ONLY_METHODS, STATELESS_ENTRY)


__all__ = [
    "CACHEABLE",
    "METHODS",
    "STATELESS_ENTRY",
    "STATELESS_ONLY",
    "claim_for",
    "claim_stateless",
    "dispatch",
    "finish",
]
