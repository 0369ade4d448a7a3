"""The hook points the serving code calls for observation; off, a hook costs one None check
(specs/observability.md, "Hooks"; decision 55)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, Protocol

from ..core.jsonrpc import JsonObject


class RelayObserver(Protocol):
    def on_relay(self, child: str, tool: str, ctx: Any) -> None:
        """A tools/call is about to be relayed to `child` as `tool`; `ctx.meta` may be
        replaced (the trace context the child gets)."""


class CodexTurnObserver(Protocol):
    def on_codex_turn(
        self, tool: str, call_next: Callable[[], Awaitable[JsonObject]]
    ) -> Awaitable[JsonObject]:
        """A Codex turn (`tool`: codex or codex-reply): run it with `call_next()` and
        answer its result (FastMCP's middleware shape)."""


class RelayHooks:
    """A provider that relays tools/call to child servers (the gateway)."""

    relay_observer: RelayObserver | None = None


class CodexTurnHooks:
    """A provider that runs Codex turns (the Codex server)."""

    turn_observer: CodexTurnObserver | None = None
