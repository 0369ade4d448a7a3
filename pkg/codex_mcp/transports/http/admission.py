"""The one admission every HTTP entry goes through: who is calling, and what it may do.

Two steps, each in one place (specs/isolation.md, "HTTP entries, status page, metrics
and logs"):

- `Admission.middleware`, before any route: Host and Origin (security.Guard), then the
  credential (a static bearer token, or an OAuth access token), then the scopes the
  route needs of an OAuth token: the server's (`--oauth-scope`) for the MCP routes and
  /readyz, the operator's (`--oauth-operator-scope`) for the status page and /metrics,
  which show every session and each child's stderr. A static token needs no scope.
- `Admission.message`, on every decoded JSON-RPC message (one request, a batch, a
  2026-07-28 request, a single-event GET's `?request=`, a 2024-11-05 POST): the scopes
  of each tools/call's tool (`--oauth-tool-scope`).

Sessions are found by id and credential together (exchange.find_session): another
credential's session, an ended one and a guessed one are all 404.
"""

from __future__ import annotations

from typing import Any

from aiohttp import web
from aiohttp.typedefs import Handler

from ...core.caller import CALLER_SCOPES
from .config import HttpConfig
from .oauth import GRANT_KEY
from .security import CREDENTIAL_KEY, OPEN_PATH_SUFFIXES, Guard

#: RFC 8615's prefix: metadata, public when served (oauth.py's), else 404.
WELL_KNOWN = "/.well-known/"


class Admission:
    def __init__(self, config: HttpConfig, guard: Guard | None = None) -> None:
        self.guard = guard or Guard(config)
        self.oauth = self.guard.oauth
        self.public_readyz = config.public_readyz
        prefix = config.prefix
        #: The operator's pages (observe/web.py serves them when metrics are on).
        self.operator_paths = frozenset({f"{prefix}/", f"{prefix}/metrics"})
        # Not in the metadata's scopes_supported: a client that asks for every scope listed
        # there (the official SDK does, when a challenge names none) must not get it.
        self.operator_scopes = frozenset(
            scope for entry in config.oauth_operator_scope for scope in entry.split()
        )

    @web.middleware
    async def middleware(self, request: web.Request, handler: Handler) -> web.StreamResponse:
        """Every route passes the Host/Origin checks and the credential first, but /healthz
        (nothing) and /readyz (the credential only, unless public_readyz) and the OAuth
        metadata (public: how to get a token); any other /.well-known/ path is 404."""
        guard = self.guard
        if request.path.endswith(OPEN_PATH_SUFFIXES):
            if request.path.endswith("/readyz") and not self.public_readyz:
                denied = await self._credential(request)
                if denied is not None:
                    return denied
            return await handler(request)
        denied = guard.check_host_and_origin(request)
        if denied is not None:
            return denied
        if self.oauth is not None and self.oauth.is_metadata(request):
            return await handler(request)
        if request.path.startswith(WELL_KNOWN):
            # A client's discovery probes (is this an OAuth server?): what we do not serve
            # is simply not here, for anyone. A 401 would say "bring a credential" to a
            # question that needs none, and count as a refusal (observe/refusals.py).
            raise web.HTTPNotFound()
        denied = await self._credential(request)
        if denied is not None:
            return denied
        return await handler(request)

    async def _credential(self, request: web.Request) -> web.Response | None:
        """Admit the request's credential and, for an OAuth token, the scopes its route
        needs; the request then carries the credential's fingerprint (and the grant)."""
        credential, grant, denied = await self.guard.credential(request)
        if denied is not None:
            return denied
        request[CREDENTIAL_KEY] = credential
        if grant is not None:
            assert self.oauth is not None
            operator = request.path in self.operator_paths and bool(self.operator_scopes)
            needed = self.operator_scopes if operator else self.oauth.scopes
            missing = needed - grant.scopes
            if missing:
                return self.oauth.insufficient_scope(grant, frozenset(missing))
            request[GRANT_KEY] = grant
            # The handler of this request's call reads them (RequestContext.caller_scopes).
            CALLER_SCOPES.set(grant.scopes)
        return None

    def message(self, request: web.Request, message: Any) -> web.Response | None:
        """403 when the request's OAuth grant lacks a scope this decoded message (or batch)
        needs (its tools' scopes); None otherwise, and always for a static token or
        without auth. Every entry that hands a message to the core calls this first."""
        if self.oauth is None:
            return None
        grant = request.get(GRANT_KEY)
        if grant is None:
            return None
        missing = self.oauth.missing_for(grant, message)
        if not missing:
            return None
        request_id = message.get("id") if isinstance(message, dict) else None
        return self.oauth.insufficient_scope(grant, missing, request_id)


__all__ = ["Admission"]
