"""What the transport vouches for about the caller of the request being served, beyond
its principal: the scopes of its OAuth grant.

The HTTP transport checks the token in the request's own task and sets `CALLER_SCOPES`
there; the core starts the request's handler in a task made from that context, so the
handler reads the scopes of the request it serves (`RequestContext.caller_scopes`).
Anything that did not come through such a request (stdio, a static token, no auth) reads
None, and a handler that widens what a caller may do by scope then widens nothing.
"""

from __future__ import annotations

from contextvars import ContextVar
from typing import Final

CALLER_SCOPES: Final[ContextVar[frozenset[str] | None]] = ContextVar(
    "codex_mcp_caller_scopes", default=None
)
