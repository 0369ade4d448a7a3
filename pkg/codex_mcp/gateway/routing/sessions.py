"""Per-session children: a child of its own for each owner (a session, or a 2026-07-28
principal), within the caps (specs/gateway.md, "Per-session children over HTTP")."""

from __future__ import annotations

import asyncio
import logging
import os
from collections import Counter
from collections.abc import Awaitable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from codex_mcp.core.errors import McpError
from codex_mcp.core.session import StatelessSession
from codex_mcp.session_logs import session_label

from ..children.child import Child
from ..config.model import GatewayConfig, ServerConfig
from ..errors import limit_error
from .catalog import Catalog
from .naming import SEPARATOR, sanitize_name

if TYPE_CHECKING:
    from codex_mcp.core.session import ServerSession

log = logging.getLogger("codex_mcp.gateway")
_OWNER = "codex_mcp.gateway.owner"
#: Per core: a child per session costs a process's start-up CPU and its share of the core.
_CHILDREN_PER_CORE = 8
#: Per child: room for a Node or Python server's resident memory with margin.
_MEMORY_PER_CHILD = 128 * 1024 * 1024
DEFAULT_PRINCIPAL_IDLE_SEC = 300.0


def default_session_children() -> int:
    """The cap when the config sets none: the fewer of 8 per core and one per 128 MiB."""
    try:
        cores = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        cores = os.cpu_count() or 1
    by_cores = cores * _CHILDREN_PER_CORE
    try:
        memory = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (AttributeError, OSError, ValueError):
        memory = 0
    by_memory = memory // _MEMORY_PER_CHILD if memory > 0 else by_cores
    return max(2, min(by_cores, by_memory))


@dataclass(eq=False)
class Owner:
    """Whose per-session children: one client session, or one 2026-07-28 principal."""

    principal: str | None
    #: The client session; None for a 2026-07-28 principal's children.
    session: ServerSession | None = None
    children: dict[str, Child] = field(default_factory=dict)
    #: Server -> the limit it was refused a slot by: (the number, whether per principal).
    refused: dict[str, tuple[int, bool]] = field(default_factory=dict)
    #: (the gateway's generation, the catalog this owner sees).
    catalog: tuple[int, Catalog] | None = None
    last_used: float = 0.0
    timer: asyncio.TimerHandle | None = None
    released: bool = False

    @property
    def label(self) -> str:
        """How logs name it (a prefix of a session id: the id is a credential)."""
        if self.session is not None:
            return f"session {session_label(self.session.session_id)}"
        return "2026-07-28 caller " + (self.principal[:12] if self.principal else "(anonymous)")

    @property
    def reachable(self) -> bool:
        """Can it be sent notifications and requests outside a call? (A principal cannot:
        it has no stream but the response to each of its requests.)"""
        session = self.session
        return session is not None and session.initialized and not session.closed


class Gateway(Protocol):
    """What per-session children need of the gateway that serves them (provider.py)."""

    config: GatewayConfig

    def make_child(self, server: ServerConfig, owner: Owner | None = None) -> Child:
        """A child of `server`, not started, serving `owner` alone (None: shared)."""

    def spawn(self, work: Awaitable[Any]) -> None:
        """Run `work` in the background, kept until it ends."""


class SessionChildren:
    def __init__(self, gateway: Gateway, servers: Sequence[ServerConfig]) -> None:
        self.gateway = gateway
        #: Every per-session child alive now, across owners (-> its owner), and how many
        #: per principal.
        self.live: dict[Child, Owner] = {}
        self.per_principal: Counter[str | None] = Counter()
        #: 2026-07-28 callers' owners, by principal.
        self.principals: dict[str | None, Owner] = {}
        self._configure(gateway.config, servers)

    def _configure(self, config: GatewayConfig, servers: Sequence[ServerConfig]) -> None:
        self.servers = list(servers)
        # Unset, neither keeps one client from its whole set (stdio has one client).
        self.limit = config.max_session_children or max(
            default_session_children(), len(self.servers)
        )
        self.share = config.max_session_children_per_principal or max(
            len(self.servers), self.limit // 2, 1
        )
        self.idle = config.principal_idle_sec or DEFAULT_PRINCIPAL_IDLE_SEC

    def reconfigure(self, config: GatewayConfig, servers: Sequence[ServerConfig]) -> None:
        """A reloaded config: its servers and caps from now on; the children of a server it
        no longer has stop (those of a changed one keep their entry until their owner ends)."""
        self._configure(config, servers)
        names = {server.name for server in servers}
        for child, owner in list(self.live.items()):
            if child.name not in names:
                if owner.children.get(child.name) is child:
                    del owner.children[child.name]
                owner.catalog = None
                self.gateway.spawn(self._stop(child, owner))

    def owner(self, session: ServerSession, *, create: bool = True) -> Owner | None:
        """Whose children `session`'s requests use (made with `create`); a 2026-07-28 caller's
        use counts as activity against its idle expiry."""
        if isinstance(session, StatelessSession):
            owner = self.principals.get(session.principal)
            if owner is None and create and self.servers:
                owner = self.principals[session.principal] = Owner(session.principal)
            if owner is not None:
                self._touch(owner)
            return owner
        owner = session.state.get(_OWNER)
        if owner is None and create and self.servers and not session.closed:
            owner = session.state[_OWNER] = Owner(session.principal, session)
            session.cleanup.push_async_callback(self._release, owner)
        return owner

    def children(self, session: ServerSession, *, start: bool = True) -> list[Child]:
        """The owner's children; with `start`, those it lacks are created and started."""
        owner = self.owner(session, create=start)
        if owner is None:
            return []
        ended = owner.released or (owner.session is not None and owner.session.closed)
        if start and len(owner.children) < len(self.servers) and not ended:
            self._start_missing(owner)
        return list(owner.children.values())

    def _start_missing(self, owner: Owner) -> None:
        for server in self.servers:
            if server.name in owner.children:
                continue
            refusal = self._refusal(owner)
            if refusal is not None:
                if server.name not in owner.refused:
                    reason = limit_error(*refusal, server=server.name)["message"]
                    log.warning("%s: not started for %s: %s", server.name, owner.label, reason)
                owner.refused[server.name] = refusal
                continue
            owner.refused.pop(server.name, None)
            child = self.gateway.make_child(server, owner=owner)
            owner.children[server.name] = child
            self.live[child] = owner
            self.per_principal[owner.principal] += 1
            child.start()
            log.debug("%s: started for %s", server.name, owner.label)

    def _refusal(self, owner: Owner) -> tuple[int, bool] | None:
        """The limit a new child of `owner` would pass, if any."""
        if len(self.live) >= self.limit:
            return self.limit, False
        if owner.principal is not None and self.per_principal[owner.principal] >= self.share:
            return self.share, True
        return None

    def refusal_for(self, session: ServerSession, tool: str, passthrough: bool) -> McpError | None:
        """The error for a call to a tool of a server this owner was refused, if it is one."""
        owner = self.owner(session, create=False)
        for server, refusal in (owner.refused if owner is not None else {}).items():
            if passthrough or tool.startswith(sanitize_name(server) + SEPARATOR):
                error = limit_error(*refusal, server=server, tool=tool)
                return McpError(error["code"], error["message"], error["data"])
        return None

    # -- a 2026-07-28 principal's idle expiry -------------------------------------
    def _touch(self, owner: Owner) -> None:
        loop = asyncio.get_running_loop()
        owner.last_used = loop.time()
        if owner.timer is None and not owner.released:
            owner.timer = loop.call_later(self.idle, self._expire_if_idle, owner)

    def _expire_if_idle(self, owner: Owner) -> None:
        owner.timer = None
        loop = asyncio.get_running_loop()
        # A call waiting on a child (its start, its listing, the call itself) is activity.
        busy = any(child.busy for child in owner.children.values())
        left = owner.last_used + self.idle - loop.time()
        if busy or left > 0:
            owner.timer = loop.call_later(max(left, 0.0) or self.idle, self._expire_if_idle, owner)
            return
        if self.principals.get(owner.principal) is owner:
            del self.principals[owner.principal]
        log.info("%s: idle for %g s; its per-session children stop", owner.label, self.idle)
        self.gateway.spawn(self._release(owner))

    # -- stopping ------------------------------------------------------------------
    async def _release(self, owner: Owner) -> None:
        owner.released = True
        if owner.timer is not None:
            owner.timer.cancel()
            owner.timer = None
        children, owner.children = owner.children, {}
        await asyncio.gather(*(self._stop(child, owner) for child in children.values()))

    async def _stop(self, child: Child, owner: Owner) -> None:
        try:
            await child.stop()
        finally:
            if self.live.pop(child, None) is not None:
                self.per_principal[owner.principal] -= 1
                if self.per_principal[owner.principal] <= 0:
                    del self.per_principal[owner.principal]
            log.debug("%s: stopped with %s", child.name, owner.label)

    async def stop_all(self) -> None:
        owners = {*self.live.values(), *self.principals.values()}  # by identity (eq=False)
        self.principals.clear()
        await asyncio.gather(*(self._release(owner) for owner in owners))
