"""Which revision the gateway speaks to a child, decided by the revision of the front it
serves (specs/gateway.md, "Relaying": Eras; decision 68).

A child that serves only 2026-07-28 fronts (a 2026-07-28 principal's per-session child) is
greeted with `server/discover` first. Any other child is greeted with `initialize` (a legacy
front, Codex by default, keeps the legacy session and every feature of it); when a
2026-07-28 front then asks it something and it speaks 2026-07-28 too, that front's requests
go over a second connection spoken to in 2026-07-28 (its "stateless lane"), so the child's
own input-required rounds, tasks and results reach the front as the child makes them. A
child that refuses `server/discover` there is spoken to in the legacy revision by every front
from then on."""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Sequence
from typing import TYPE_CHECKING

from codex_mcp.core.context import RequestContext
from codex_mcp.core.flow import Flow
from codex_mcp.core.jsonrpc import JsonObject
from codex_mcp.core.provider import ListKind

from ..config.model import RestartConfig, ServerConfig
from .child import Child, ChildHost, Owner
from .connection import Connection, Handshake

if TYPE_CHECKING:
    from codex_mcp.core.session import ServerSession

log = logging.getLogger("codex_mcp.gateway")


def handshake_for(owner: Owner | None) -> Handshake:
    """How a new child is first spoken to: `server/discover` first when each front it will
    serve speaks 2026-07-28 (a principal's own child has no session: its callers are all
    2026-07-28 requests), else `initialize` first."""
    return "discover" if owner is not None and owner.session is None else "initialize"


def is_stateless_front(ctx: RequestContext) -> bool:
    """Does the front request speak 2026-07-28 (it carries the envelope)?"""
    return getattr(ctx, "request_meta", None) is not None


def may_speak_stateless(child: Child) -> bool:
    """Might a 2026-07-28 front be served by this child in 2026-07-28 over a lane (not
    known to refuse it, and not spoken to in 2026-07-28 already)?"""
    if child.speaks_stateless is False or child.handshake != "initialize":
        return False  # known not to, or greeted with server/discover already
    connection = child.connection
    return connection is None or connection.session.stateless is None


async def child_for(child: Child, ctx: RequestContext) -> Child:
    """Where a front request to `child` goes: the child itself, or for a 2026-07-28 front
    and a child we spoke to with `initialize`, its stateless lane when it has one (opened
    now, the first time, within the child's startup timeout)."""
    if not is_stateless_front(ctx) or not may_speak_stateless(child):
        return child
    connection = child.connection
    if connection is None:  # down, or not started: once it is up, its own revision is known
        return child
    lane = child.stateless_lane
    if lane is None or lane.state == "failed":  # first need, or it died since
        lane = child.sibling(_lane_server(child), LaneHost(child), "discover-only")
        child.stateless_lane = lane
    if lane.connection is None:
        lane.start()  # a new one, or one stopped for want of use (idle_timeout_sec)
    if await lane.wait_up(child.startup_timeout) and lane.connection is not None:
        if child.speaks_stateless is None:
            child.speaks_stateless = True
            log.info(
                "%s: 2026-07-28 fronts are served in 2026-07-28 (a second connection)", child.name
            )
        return lane
    if not lane.was_up:  # it does not speak 2026-07-28 (or not at all now): legacy for all
        child.speaks_stateless = False
        child.stateless_lane = None
        await lane.stop()
        log.info(
            "%s: does not answer server/discover (%s): 2026-07-28 fronts are served in the "
            "legacy revision",
            child.name,
            lane.last_error or "no answer",
        )
    return child


def _lane_server(child: Child) -> ServerConfig:
    """The child's entry, never restarted on its own: a lane that dies is opened again by
    the next 2026-07-28 request that needs it."""
    return dataclasses.replace(child.server, restart=RestartConfig(policy="never"))


class LaneHost:
    """The host of a stateless lane: what it sends goes to the gateway as its child's (the
    same name, owner and clients); its coming up and listing change nothing the fronts see
    (the child's own listings are the catalog's)."""

    def __init__(self, child: Child) -> None:
        self.child = child
        self.host: ChildHost = child.host
        self.flow: Flow = child.host.flow  # the gateway's, set once (build_core)

    def child_changed(self, child: Child, kinds: Sequence[ListKind]) -> None:
        pass

    def child_connected(self, child: Child, connection: Connection, own: bool) -> None:
        self.host.child_connected(self.child, connection, False)  # its tools are not listed

    def child_notification(
        self, child: Child, method: str, params: JsonObject, call: RequestContext | None
    ) -> None:
        self.host.child_notification(self.child, method, params, call)

    async def child_request(
        self, child: Child, method: str, params: JsonObject, call: RequestContext | None
    ) -> JsonObject:
        return await self.host.child_request(self.child, method, params, call)

    def sole_session(self) -> ServerSession | None:
        return self.host.sole_session()


__all__ = ["LaneHost", "child_for", "handshake_for", "is_stateless_front", "may_speak_stateless"]
