"""ServerCore: what every session of one server shares.

It holds the provider, the server's identity and the method table, opens a
session per connection, and tells the live sessions when a provider's lists
change or a subscribed resource is updated.
"""

from __future__ import annotations

import weakref
from typing import Any

from .jsonrpc import JsonObject
from .methods import DEFAULT_METHODS, MethodTable, legacy
from .provider import Provider
from .session import Outbound, ServerSession


class ServerCore:
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
        provider.add_listener(self._on_provider_event)

    def open_session(self, outbound: Outbound, session_id: str | None = None) -> ServerSession:
        session = ServerSession(self, outbound, session_id)
        self._sessions.add(session)
        return session

    def forget_session(self, session: ServerSession) -> None:
        self._sessions.discard(session)

    @property
    def sessions(self) -> list[ServerSession]:
        return list(self._sessions)

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

    async def aclose(self) -> None:
        for session in list(self._sessions):
            session.close()
        await self.provider.aclose()
