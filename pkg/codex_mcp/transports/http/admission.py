"""The one admission every HTTP entry goes through: who is calling, and what it may do
(decision 46; specs/isolation.md, "HTTP entries, status page, metrics and logs")."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from aiohttp import web
from aiohttp.typedefs import Handler

from ...core.context import CALLER_SCOPES, CALLER_SUBJECT
from .config import HttpConfig
from .errors import REFUSAL_REASON, refusal
from .oauth import GRANT_KEY, Grant
from .operator_login import OperatorLogin
from .security import CREDENTIAL_KEY, OPEN_PATH_SUFFIXES, Guard

if TYPE_CHECKING:
    from ...policy import Policy

#: The methods a login cookie is read on: reading pages, never changing anything.
_COOKIE_METHODS = frozenset({"GET", "HEAD"})

#: RFC 8615's prefix: metadata, public when served (oauth.py's), else 404.
WELL_KNOWN = "/.well-known/"


class Admission:
    def __init__(
        self,
        config: HttpConfig,
        guard: Guard | None = None,
        policy: Callable[[], Policy | None] | None = None,
    ) -> None:
        self.guard = guard or Guard(config)
        #: The policy deciding for the served core (its `require` rules are what a
        #: tools/call's 403 insufficient_scope names: policy/decide.py).
        self.policy = policy
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
        self.status_path = f"{prefix}/"
        #: The server card (--server-card): public, like the OAuth metadata, but on the Host
        #: check, since the URL it names comes from the Host.
        self.card_path = None
        if config.server_card:  # a draft extension, off by default: loaded when on
            from .server_card import card_path

            self.card_path = card_path(config)
        #: The browser login to the operator's pages, when they exist behind a credential.
        self.login = (
            OperatorLogin(prefix, config.operator_cookie_secret, self.guard.static_fingerprints)
            if config.metrics and (config.bearer_tokens or self.oauth is not None)
            else None
        )
        #: Paths served while the shared store is down (app.store_gate).
        self.storeless_paths = (
            self.operator_paths
            | ({self.login.path} if self.login is not None else set())
            | ({self.card_path} if self.card_path is not None else set())
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
        if request.path == self.card_path:
            denied = guard.check_host(request, guard.trusted_forward(request))
            return denied if denied is not None else await handler(request)
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
        login = self.login
        if login is not None and request.path == login.path:
            return await self._login(login, request)
        denied = await self._credential(request)
        if denied is not None:
            if login is not None and self._browser_at_status_page(request, denied):
                challenge = denied.headers.get("WWW-Authenticate", "")
                form = login.form(401, "", {"WWW-Authenticate": challenge})
                return refusal(form, denied.get(REFUSAL_REASON, "no_credential"))
            return denied
        return await handler(request)

    def _browser_at_status_page(self, request: web.Request, denied: web.Response) -> bool:
        return (
            denied.status == 401
            and request.path == self.status_path
            and request.method in _COOKIE_METHODS
            and "text/html" in request.headers.get("Accept", "")
        )

    async def _login(self, login: OperatorLogin, request: web.Request) -> web.Response:
        """The login form (GET), or a login (POST): the token is admitted as a bearer
        header would be, and must hold the operator scope; the answer is a cookie."""
        if request.method in _COOKIE_METHODS:
            return login.form(200)
        if request.method != "POST":
            return login.form(405, "Log in with the form.", {"Allow": "GET, HEAD, POST"})
        # Host and Origin were checked above; a browser's form POST always sends Origin,
        # and only this server's own page (or an allowed origin's) has our form to send.
        if not self.guard.is_own_origin(request):
            return refusal(login.form(403, "Log in from this server's own form."), "origin")
        # The attempt is taken before the body is read: logins sent together, their
        # bodies held back, get no more verdicts than logins sent one by one.
        attempt = self.guard.guessing.attempt(self.guard.client_address(request))
        if attempt.wait:
            said = f"Too many failed logins from here: try again in {attempt.wait} s."
            locked = login.form(429, said, {"Retry-After": str(attempt.wait)})
            return refusal(locked, "guessing")
        with attempt:
            token = await login.read_token(request)
            if isinstance(token, web.Response):
                return token
            credential, grant, denied = await self.guard.admit_token(token, attempt)
        if denied is not None or credential is None:
            if denied is not None and denied.status == 503:  # the issuer's keys, not the token
                return login.form(503, "Tokens cannot be checked now: try again shortly.")
            return refusal(login.form(401, "That token was not accepted."), "wrong_credential")
        missing = self._operator_scopes_missing(grant)
        if missing:
            said = f"That token lacks the scope: {' '.join(sorted(missing))}."
            return refusal(login.form(403, said), "scope")
        return login.logged_in(credential, grant, secure=self.guard.is_https(request))

    async def _credential(self, request: web.Request) -> web.Response | None:
        """Admit the request's credential and, for an OAuth token, the scopes its route
        needs; the request then carries the credential's fingerprint (and the grant)."""
        login = self.login
        if (
            login is not None
            and request.path in self.operator_paths
            and request.method in _COOKIE_METHODS
            and "Authorization" not in request.headers
        ):
            bound = login.admit(request)
            if bound is not None:
                request[CREDENTIAL_KEY] = bound
                return None
        credential, grant, denied = await self.guard.credential(request)
        if denied is not None:
            return denied
        request[CREDENTIAL_KEY] = credential
        if grant is not None:
            assert self.oauth is not None
            if request.path in self.operator_paths:
                missing = self._operator_scopes_missing(grant)
            else:
                missing = self.oauth.scopes - grant.scopes
            if missing:
                return self.oauth.insufficient_scope(grant, frozenset(missing))
            request[GRANT_KEY] = grant
            # The handler of this request's call reads them (RequestContext.caller_scopes).
            CALLER_SCOPES.set(grant.scopes)
            CALLER_SUBJECT.set(grant.subject)
        return None

    def _operator_scopes_missing(self, grant: Grant | None) -> frozenset[str]:
        """What an OAuth grant lacks for the operator's pages: the operator scope, or the
        server's scopes when the operator scope is set to none."""
        if grant is None:  # a static token: the operator's own
            return frozenset()
        assert self.oauth is not None
        needed = self.operator_scopes or self.oauth.scopes
        return frozenset(needed - grant.scopes)

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
        policy = self.policy() if self.policy is not None else None
        if policy is not None:
            from ...policy.caller import caller_of_grant

            for each in message if isinstance(message, list) else [message]:
                name = _called_tool(each)
                if name is not None:
                    missing |= policy.scopes_to_call(caller_of_grant(request, grant), name)
        if not missing:
            return None
        request_id = message.get("id") if isinstance(message, dict) else None
        return self.oauth.insufficient_scope(grant, missing, request_id)


def _called_tool(message: Any) -> str | None:
    """The tool a tools/call message names, if it is one."""
    if isinstance(message, dict) and message.get("method") == "tools/call":
        params = message.get("params")
        name = params.get("name") if isinstance(params, dict) else None
        return name if isinstance(name, str) else None
    return None


__all__ = ["Admission"]
