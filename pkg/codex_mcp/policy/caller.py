"""Who is calling, as the policy sees it, from what the transport admitted."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..core.context import CALLER_SCOPES, CALLER_SUBJECT
from ..core.log_names import session_label
from ..session_logs import principal_of_fingerprint
from .rules import Caller

if TYPE_CHECKING:
    from aiohttp import web

    from ..core.context import RequestContext
    from ..transports.http.oauth import Grant

#: A credential's fingerprint as rules and logs name it: `sha256:` and its first 16 hex
#: digits, never the token (the audit log's form, one definition).
principal_name = principal_of_fingerprint


def caller_of(ctx: RequestContext) -> Caller:
    session = ctx.session
    session_id = session.session_id
    return Caller(
        principal=principal_name(session.principal),
        subject=CALLER_SUBJECT.get(),
        scopes=CALLER_SCOPES.get(),
        session=session_label(session_id) if session_id else None,
    )


def caller_of_grant(request: web.Request, grant: Grant) -> Caller:
    """The caller of an HTTP request admitted with an OAuth grant, before any session
    handles it (the 403 a step-up needs is answered there)."""
    session_id = request.headers.get("Mcp-Session-Id")
    return Caller(
        principal=principal_name(grant.principal),
        subject=grant.subject,
        scopes=grant.scopes,
        session=session_label(session_id) if session_id else None,
    )
