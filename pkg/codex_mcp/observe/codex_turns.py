"""A Codex turn seen from here: when tracing, a `codex turn` span under the request's span
(hooks.CodexTurnHooks; specs/observability.md, "Hooks")."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING

from ..core.jsonrpc import JsonObject
from .dispatch import CURRENT

if TYPE_CHECKING:
    from .tracing import TracingSink


class CodexTurnSpans:
    def __init__(self, tracing: TracingSink) -> None:
        self.tracing = tracing

    async def on_codex_turn(
        self, tool: str, call_next: Callable[[], Awaitable[JsonObject]]
    ) -> JsonObject:
        call = CURRENT.get()
        if call is None or call.span is None:
            return await call_next()
        with self.tracing.child_span(call, "codex turn", {"codex.tool": tool}) as span:
            result = await call_next()
            structured = result.get("structuredContent") if isinstance(result, dict) else None
            if isinstance(structured, dict) and structured.get("threadId"):
                span.set_attribute("codex.thread_id", str(structured["threadId"]))
            return result
