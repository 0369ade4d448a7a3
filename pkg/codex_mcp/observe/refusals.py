"""Refused HTTP requests: each logged once (rate-limited), counted, and audited
(specs/observability.md, "Refused requests")."""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from aiohttp import web

from ..core.log_names import printable
from ..session_logs import TAG_START, principal_of_fingerprint, session_label
from . import plain_metrics
from .audit import principal_of_token

if TYPE_CHECKING:
    from .audit import AuditLog

log = logging.getLogger("codex_mcp.http.refused")

REFUSED = frozenset({401, 403, 404, 413, 415, 429, 503})
#: The refusals metric's reasons: what the refusing code named (transports/http/errors.py,
#: `refusal`), else what its status means; anything else is "other" (a bounded label).
REASONS = frozenset(
    {
        "no_credential",  # 401: no bearer token
        "wrong_credential",  # 401: a token (or login) not accepted
        "guessing",  # 429: too many wrong credentials from the address (guessing.py)
        "scope",  # 403: a token without a scope the request needs
        "host",  # 403: a Host that is not allowed (DNS rebinding)
        "origin",  # 403: an Origin that is not allowed
        "issuer_unreachable",  # 503: the OAuth issuer's keys cannot be had
        "session",  # 404: no such session
        "too_large",  # 413
        "content_type",  # 415
        "busy",  # 429: the session's calls fill its share
        "unavailable",  # 503: the server is full, shutting down, or its store is down
    }
)
_BY_STATUS = {
    404: "session",
    413: "too_large",
    415: "content_type",
    429: "busy",
    503: "unavailable",
}
PROBES = ("/healthz", "/readyz")
#: The code of the 404 that means "no such session" (transports/http/errors.py).
SESSION_NOT_FOUND = -32001


#: Who a request comes from (transports/http/client_address.py, behind a trusted proxy).
ClientAddress = Callable[[web.Request], str | None]


class RefusalLog:
    def __init__(
        self,
        audit: AuditLog | None = None,
        client_address: ClientAddress | None = None,
        burst: int = 20,
        window: float = 10.0,
    ):
        self.audit = audit
        self.client_address: ClientAddress = client_address or (lambda request: request.remote)
        self.burst = burst
        self.window = window
        self._window_start = 0.0
        self._logged = 0
        self._suppressed = 0
        self._counts = plain_metrics.family(plain_metrics.REFUSED)

    def note(self, request: web.Request, status: int, reason: str, kind: str) -> None:
        """Log, count (by status and `kind`, one of REASONS) and audit a refusal."""
        # Everything here but the status came from outside (the path URL-decoded, a
        # reason that may quote a header): each goes through `printable`.
        client = printable(self.client_address(request))
        method, path, reason = printable(request.method), printable(request.path), printable(reason)
        self._counts.get(str(status), kind if kind in REASONS else "other").inc()
        if self.audit is not None:
            self.audit.refused(status, reason, client, method, path, _principal(request))
        now = time.monotonic()
        if now - self._window_start >= self.window:
            if self._suppressed:
                log.info(
                    "%d more refused request(s) in the last %.0f s not logged one by one",
                    self._suppressed,
                    self.window,
                )
            self._window_start, self._logged, self._suppressed = now, 0, 0
        if self._logged >= self.burst:
            self._suppressed += 1
            return
        self._logged += 1
        log.info(
            "%srefused %s %s from %s: %d %s",
            _session_tag(request),
            method,
            path,
            client,
            status,
            reason,
        )

    def check(self, request: web.Request, response: web.StreamResponse) -> None:
        """Note `response` if it refuses the request."""
        status = response.status
        if status not in REFUSED or request.path.endswith(PROBES):
            return  # a probe's 503 reports the server's state: it refuses nobody
        error = _error_of(response)
        if status == 404 and (error is None or error.get("code") != SESSION_NOT_FOUND):
            return  # an unknown path or method: not a refusal of a client we know
        reason = str(error.get("message")) if error is not None else (response.reason or "")
        from ..transports.http.errors import REFUSAL_REASON

        kind = response.get(REFUSAL_REASON) or _BY_STATUS.get(status, "other")
        self.note(request, status, reason, kind)


def _error_of(response: web.StreamResponse) -> dict[str, Any] | None:
    body = getattr(response, "body", None)
    if not isinstance(body, bytes | bytearray) or not body.startswith(b"{"):
        return None
    try:
        error = json.loads(body).get("error")
    except (ValueError, AttributeError):
        return None
    return error if isinstance(error, dict) else None


def _session_tag(request: web.Request) -> str:
    """The line's name for the session the request is for (its Mcp-Session-Id, or the
    2024-11-05 transport's session_id), by the prefix of its id; none when it names none."""
    # Here, not at the top: the transport's package imports this module (a refusal is rare).
    from ..transports.http.exchange import SESSION_HEADER

    session_id = request.headers.get(SESSION_HEADER) or request.query.get("session_id")
    return f"{TAG_START}{session_label(session_id)}] " if session_id else ""


def _principal(request: web.Request) -> str | None:
    """The caller as the call lines name it: the fingerprint the admission gave the request
    (an OAuth token's is its issuer and subject's), else the hash of the token it sent."""
    from ..transports.http.security import credential_of

    admitted = credential_of(request)
    if admitted is not None:
        return principal_of_fingerprint(admitted)
    scheme, _, token = request.headers.get("Authorization", "").partition(" ")
    return (
        principal_of_token(token.strip()) if scheme.lower() == "bearer" and token.strip() else None
    )
