"""What the transport vouches for about the caller beyond its principal: its OAuth scopes,
read by the handler as `RequestContext.caller_scopes` (None off HTTP OAuth; decision 47)."""

from __future__ import annotations

from contextvars import ContextVar
from typing import Final

CALLER_SCOPES: Final[ContextVar[frozenset[str] | None]] = ContextVar(
    "codex_mcp_caller_scopes", default=None
)
