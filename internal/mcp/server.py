"""ServerCore: what every session of one server shares.

It holds the provider, the server's identity and the method table, runs the
provider's lifespan, opens a session per connection (and tears each down when it
ends: the provider's close hook, then the session's cleanup stack), and tells the live
sessions when a provider's lists change or a subscribed resource is updated.
"""

from __future__ import annotations

import asyncio
import logging
import weakref
from typing import Any

from .jsonrpc import JsonObject
from .methods import DEFAULT_METHODS, legacy
from .peer import MethodTable
from .provider import Provider
from .session import Outbound, ServerSession

log = logging.getLogger("codex_mcp.server")


class ServerCore:
    """A server, free of transports: stdio serves one session with it, HTTP many.

    ```python
    core = ServerCore(provider, name="demo", version="1.0")
    await core.start()                      # the provider's lifespan begins
    session = core.open_session(outbound)   # one per connection
    session.receive(message)                # ... answers go to outbound.send
    await session.aclose()                  # the session's teardown, awaited
    await core.aclose()                     # every session, then the provider, stopped
    ```
    """

    def __init__(
        self,
        provider: Provider,
        *,
        name: str,
        version: str,
        title: str | None = None,
        instructions: str | None = None,
        page_size: int = 1000,
        server_info_extra: JsonObject | None = None,
    ) -> None:
        self.provider = provider
        self.server_info: JsonObject = {"name": name, "version": version}
        if title:
            self.server_info["title"] = title
        if server_info_extra:
            self.server_info.update(server_info_extra)
        self.instructions = instructions
        self.page_size = page_size
        self.methods: MethodTable = dict(DEFAULT_METHODS)
        self.fallback_handler: Any = legacy.direct_tool_call
        self._sessions: weakref.WeakSet[ServerSession] = weakref.WeakSet()
        self._teardowns: set[asyncio.Task[None]] = set()
        self._started = False
        self._stopped = False
        provider.add_listener(self._on_provider_event)

    # -- lifespan --------------------------------------------------------------
    async def start(self) -> None:
        """Start the provider (idempotent). Transports call it before serving."""
        if not self._started:
            self._started = True
            await self.provider.start()

    async def aclose(self) -> None:
        """End every session, wait for their teardown, then stop the provider."""
        for session in list(self._sessions):
            session.close()
        if self._teardowns:
            await asyncio.gather(*list(self._teardowns), return_exceptions=True)
        if not self._stopped:
            self._stopped = True
            await self.provider.stop()

    # -- sessions --------------------------------------------------------------
    def open_session(self, outbound: Outbound, session_id: str | None = None) -> ServerSession:
        session = ServerSession(self, outbound, session_id)
        self._sessions.add(session)
        self.provider.open_session(session)
        return session

    def end_session(self, session: ServerSession) -> asyncio.Task[None] | None:
        """Called by a closing session: forget it and start its teardown."""
        self._sessions.discard(session)
        try:
            task = asyncio.get_running_loop().create_task(self._teardown(session))
        except RuntimeError:  # no loop (a session closed at interpreter exit): nothing to run
            return None
        self._teardowns.add(task)
        task.add_done_callback(self._teardowns.discard)
        return task

    async def _teardown(self, session: ServerSession) -> None:
        try:
            await self.provider.close_session(session)
        except Exception:
            log.exception("closing a session in the provider failed")
        try:
            await session.cleanup.aclose()
        except Exception:
            log.exception("a session's cleanup failed")

    def forget_session(self, session: ServerSession) -> None:
        self._sessions.discard(session)

    @property
    def sessions(self) -> list[ServerSession]:
        return list(self._sessions)

    def roots_changed(self, session: ServerSession) -> None:
        try:
            self.provider.roots_changed(session)
        except Exception:
            log.exception("the provider failed on roots_changed")

    # -- what the server offers ------------------------------------------------
    def capabilities(self) -> JsonObject:
        features = self.provider.features
        caps: JsonObject = {"logging": {}}
        if "tools" in features:
            caps["tools"] = {"listChanged": True}
        if "resources" in features:
            caps["resources"] = {"subscribe": True, "listChanged": True}
        if "prompts" in features:
            caps["prompts"] = {"listChanged": True}
        if "completions" in features:
            caps["completions"] = {}
        return caps

    def _on_provider_event(self, kind: str, uri: str | None) -> None:
        for session in list(self._sessions):
            if session.closed:
                continue
            if kind == "resource_updated":
                if uri in session.subscriptions:
                    session.notify("notifications/resources/updated", {"uri": uri})
            elif session.initialized:
                session.notify(f"notifications/{kind}/list_changed")


__all__ = ["ServerCore"]
