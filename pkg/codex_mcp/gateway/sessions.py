"""Per-session children: a child of its own for each client session, over HTTP (seed 004).

A session's children are created the first time it needs them (a listing or a call), kept in
`session.state`, and stopped through `session.cleanup` when the session ends: closed, deleted
or expired, as the core tears sessions down. `max_session_children` caps how many run at once
across all sessions; past it a session goes without (its listing skips that server, and a call
to one of its tools gets an error saying why).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence
from typing import TYPE_CHECKING

from codex_mcp.core.jsonrpc import JsonRpcError
from codex_mcp.log_tags import session_label

from .config_model import ServerConfig
from .errors import limit_error
from .naming import SEPARATOR, sanitize_name

if TYPE_CHECKING:
    from codex_mcp.core.session import ServerSession

    from .child import Child
    from .provider import GatewayProvider

log = logging.getLogger("codex_mcp.gateway")
_CHILDREN = "codex_mcp.gateway.children"
_REFUSED = "codex_mcp.gateway.refused"


class SessionChildren:
    def __init__(self, gateway: GatewayProvider, servers: Sequence[ServerConfig]) -> None:
        self.gateway = gateway
        self.servers = list(servers)
        self.limit = gateway.config.max_session_children
        #: Every per-session child alive now, across sessions.
        self.live: set[Child] = set()

    def children(self, session: ServerSession, *, start: bool = True) -> list[Child]:
        """The session's children; with `start`, those it lacks are created and started."""
        mine: dict[str, Child] | None = session.state.get(_CHILDREN)
        if mine is None:
            if not start or not self.servers or session.closed:
                return []
            mine = session.state[_CHILDREN] = {}
            session.cleanup.push_async_callback(self._stop_session, session)
        if start and len(mine) < len(self.servers) and not session.closed:
            self._start_missing(session, mine)
        return list(mine.values())

    def _start_missing(self, session: ServerSession, mine: dict[str, Child]) -> None:
        refused: dict[str, int] = session.state.setdefault(_REFUSED, {})
        for server in self.servers:
            if server.name in mine:
                continue
            if self.limit is not None and len(self.live) >= self.limit:
                if server.name not in refused:
                    log.warning(
                        "%s: not started for session %s: %d per-session children are running "
                        "(max_session_children)",
                        server.name, session_label(session.session_id), len(self.live),
                    )  # fmt: skip
                refused[server.name] = self.limit
                continue
            refused.pop(server.name, None)
            child = self.gateway._child(server, owner=session)
            mine[server.name] = child
            self.live.add(child)
            child.start()
            log.debug("%s: started for session %s", server.name, session_label(session.session_id))

    def refusal_for(
        self, session: ServerSession, tool: str, passthrough: bool
    ) -> JsonRpcError | None:
        """The error for a call to a tool of a server this session was refused, if it is one."""
        refused: dict[str, int] = session.state.get(_REFUSED) or {}
        for server, limit in refused.items():
            if passthrough or tool.startswith(sanitize_name(server) + SEPARATOR):
                error = limit_error(limit, server=server, tool=tool)
                return JsonRpcError(error["code"], error["message"], error["data"])
        return None

    def refused(self, session: ServerSession) -> list[str]:
        return list(session.state.get(_REFUSED) or ())

    async def _stop_session(self, session: ServerSession) -> None:
        mine: dict[str, Child] = session.state.pop(_CHILDREN, None) or {}
        await asyncio.gather(*(self._stop(child) for child in mine.values()))

    async def _stop(self, child: Child) -> None:
        try:
            await child.stop()
        finally:
            self.live.discard(child)
            log.debug("%s: stopped with its session", child.name)

    async def stop_all(self) -> None:
        await asyncio.gather(*(self._stop(child) for child in list(self.live)))
