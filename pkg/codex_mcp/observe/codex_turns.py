"""A Codex turn seen from here: when tracing, a `codex turn` span under the request's
span, with the tool and the thread it ran on. Hooked once, by wrapping the `run_call`
the Codex provider runs each codex / codex-reply call through."""

from __future__ import annotations

from typing import Any

from .dispatch import CURRENT

_HOOKED = "_codex_mcp_observed"

#: The tracing sink (tracing.py): set when tracing, None otherwise.
tracing: Any = None


def watch_codex_turns(tracing_sink: Any) -> None:
    global tracing
    tracing = tracing_sink
    from ..codex import provider as codex_provider

    provider: Any = codex_provider  # its `run_call` is the one it imported from calls.py
    original = provider.run_call
    if getattr(original, _HOOKED, False):
        return

    async def run_call(driver: Any, codex_call: Any, ctx: Any) -> Any:
        call = CURRENT.get()
        if tracing is None or call is None or call.span is None:
            return await original(driver, codex_call, ctx)
        with tracing.child_span(call, "codex turn", {"codex.tool": codex_call.tool}) as span:
            result = await original(driver, codex_call, ctx)
            structured = result.get("structuredContent") if isinstance(result, dict) else None
            if isinstance(structured, dict) and structured.get("threadId"):
                span.set_attribute("codex.thread_id", str(structured["threadId"]))
            return result

    setattr(run_call, _HOOKED, True)
    provider.run_call = run_call
