"""The 2026-07-28 envelope on requests to a child that speaks only that revision (specs/gateway.md,
"Relaying": Eras)."""

from __future__ import annotations

import dataclasses

from codex_mcp.core.calls import CallOptions
from codex_mcp.core.context import RequestContext
from codex_mcp.core.request_meta import CLIENT_CAPABILITIES_KEY, TASKS_EXTENSION

from ..children.connection import ChildSession


def front_has_tasks(ctx: RequestContext) -> bool:
    """Whether the front request declared the tasks extension (a 2026-07-28 one)."""
    meta = getattr(ctx, "request_meta", None)
    return meta is not None and bool(meta.supports_extension(TASKS_EXTENSION))


def envelope(
    session: ChildSession, ctx: RequestContext, options: CallOptions, tasks: bool
) -> CallOptions:
    """`options` with the child's 2026-07-28 envelope: the front's capabilities, with the
    tasks extension or without it, and the front's logLevel when it sent one."""
    era = session.stateless
    assert era is not None
    level = getattr(getattr(ctx, "request_meta", None), "log_level", None)
    if level is not None:  # a 2026-07-28 front's logLevel: the child's log messages it asked for
        era = dataclasses.replace(era, log_level=level)
    capabilities = {**ctx.client_capabilities}
    extensions = capabilities.get("extensions")
    extensions = dict(extensions) if isinstance(extensions, dict) else {}
    if tasks:
        extensions[TASKS_EXTENSION] = {}
    else:
        extensions.pop(TASKS_EXTENSION, None)
    capabilities["extensions"] = extensions
    meta = {**(options.meta or {}), CLIENT_CAPABILITIES_KEY: capabilities}
    stamped = dataclasses.replace(options, meta=meta)
    return era.stamp(stamped, session.transport.cancels_by_notification)
