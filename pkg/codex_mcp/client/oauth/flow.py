"""OAuth: the MCP authorization spec from the client's side, for one server
(specs/oauth.md, "The client's OAuth")."""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import logging
import secrets
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Protocol
from urllib.parse import parse_qs, urlencode, urlsplit

import aiohttp

from .assertions import JWT_BEARER, AssertionSource
from .challenge import Challenge
from .discovery import AuthServer, Discovered, discover
from .dpop import DpopKey, b64url
from .endpoints import SECURE_RULE, insecure_reason, require_secure
from .errors import (
    BearerTokenNeeded,
    GrantRefused,
    NeedsLogin,
    NotAnOAuthServer,
    OAuthError,
    ScopeNeeded,
    in_their_words,
    shown,
)
from .registration import ClientProfile, register
from .store import MemoryStore, Registration, ServerAuth, Store, Tokens, same_tokens
from .token_endpoint import SigningKey, request_tokens

log = logging.getLogger("codex_mcp.client.oauth")

OFFLINE_ACCESS = "offline_access"
GRANTS = ("authorization_code", "client_credentials", "jwt_bearer")


@dataclass(frozen=True, slots=True)
class Pkce:
    """PKCE (RFC 7636, S256 only, as OAuth 2.1 asks) and the `state` of one authorization."""

    verifier: str = field(default_factory=lambda: b64url(secrets.token_bytes(48)))
    state: str = field(default_factory=lambda: b64url(secrets.token_bytes(24)))

    @property
    def challenge(self) -> str:
        return b64url(hashlib.sha256(self.verifier.encode()).digest())


class Authorizer(Protocol):
    """Takes the user to the authorization URL and returns the URL the server redirected
    back to (with `code` and `state`). `redirect_uri` is where that redirect goes."""

    @property
    def redirect_uri(self) -> str: ...

    async def authorize(self, url: str) -> str: ...


class OAuth:
    def __init__(
        self,
        *,
        store: Store | None = None,
        profile: ClientProfile | None = None,
        authorizer: Authorizer | None = None,
        scopes: Sequence[str] | None = None,
        grant: str = "authorization_code",
        signing_key: SigningKey | None = None,
        fallback: bool = True,
        dpop: bool = False,
        assertion: AssertionSource | None = None,
    ) -> None:
        """`grant`: "authorization_code" (needs an `authorizer` to get new tokens; without
        one, a server needing a login raises NeedsLogin) or "client_credentials" (needs a
        pre-registered client in `profile`). `scopes` overrides the scope selection.
        `fallback=False` answers only a server that publishes resource metadata (no
        2025-03-26 guessing: its 401 may want a static token instead). `dpop=True` asks
        for DPoP-bound tokens (RFC 9449) from a server that offers them. "jwt_bearer"
        presents what `assertion` gives (assertions.py) as a pre-registered client."""
        if grant not in GRANTS:
            raise ValueError(f"grant must be one of {', '.join(GRANTS)}")
        if grant == "jwt_bearer" and assertion is None:
            raise ValueError('the "jwt_bearer" grant needs an assertion')
        self.store: Store = store if store is not None else MemoryStore()
        self.profile = profile or ClientProfile()
        self.authorizer = authorizer
        self.scopes = tuple(scopes) if scopes is not None else None
        self.grant = grant
        self.signing_key = signing_key
        self.fallback = fallback
        self.dpop = dpop
        self.assertion = assertion
        self._dpop_key: DpopKey | None = None
        self.server_url = ""
        self._state: ServerAuth | None = None
        #: The tokens the store held when we last read or wrote it: a store holding others
        #: now means another process changed them.
        self._stored_tokens: Tokens | None = None
        self._discovered: Discovered | None = None
        self._lock = asyncio.Lock()

    def bind(self, server_url: str) -> None:
        self.server_url = server_url

    @property
    def state(self) -> ServerAuth:
        if self._state is None:
            self._state = self.store.load(self.server_url)
            self._stored_tokens = self._state.tokens
        return self._state

    # -- the store, shared with other processes -----------------------------------------
    def _adopt(self, kept: ServerAuth) -> None:
        """Take the grant another process left in the store (with the DPoP key it is
        bound to)."""
        state = self.state
        state.issuer, state.tokens, state.scopes = kept.issuer, kept.tokens, kept.scopes
        if kept.dpop_key != state.dpop_key:
            state.dpop_key, self._dpop_key = kept.dpop_key, None

    def _reread(self) -> None:
        """Under the store's lock: see what other processes wrote since we last looked."""
        kept = self.store.load(self.server_url)
        state = self.state
        if not same_tokens(kept.tokens, self._stored_tokens):
            self._adopt(kept)
        state.registrations = {**state.registrations, **kept.registrations}
        self._stored_tokens = kept.tokens

    def _write(self) -> None:
        """Under the store's lock: write what we hold, unless we bring no new tokens and
        another process wrote some meanwhile: theirs are kept (never replaced by ours, which
        may be spent, or by none)."""
        kept = self.store.load(self.server_url)
        state = self.state
        ours_unchanged = state.tokens is None or same_tokens(state.tokens, self._stored_tokens)
        if ours_unchanged and not same_tokens(kept.tokens, self._stored_tokens):
            self._adopt(kept)
        state.registrations = {**kept.registrations, **state.registrations}
        self.store.save(self.server_url, state)
        self._stored_tokens = state.tokens

    async def _save(self) -> None:
        async with self.store.lock(self.server_url):
            self._write()

    # -- what the transport calls ------------------------------------------------
    async def header(self, http: aiohttp.ClientSession) -> str | None:
        """The Authorization header value for the next request, or None (no token yet)."""
        tokens = self.state.tokens
        if tokens is None:
            return None
        reason = insecure_reason(self.server_url)
        if reason is not None:
            raise OAuthError(f"{self.server_url} {reason}: not sending it a token ({SECURE_RULE})")
        if tokens.expiring() and tokens.refresh_token:
            async with self._lock:
                if self.state.tokens is tokens:
                    await self._refresh_or_drop(http)
            tokens = self.state.tokens
        return tokens.authorization() if tokens is not None else None

    async def unauthorized(
        self, http: aiohttp.ClientSession, challenge: Challenge, sent: str | None
    ) -> None:
        """A 401 to a request that carried `sent`: have a usable token, or raise."""
        async with self._lock:
            if sent != await self._current():
                return  # another request already got a new token
            async with self.store.lock(self.server_url):
                self._reread()
            if self.state.tokens is not None and sent != await self._current():
                return  # another process got one meanwhile
            found = await self._discover(http, challenge)
            state = self.state
            if state.issuer != found.server.issuer:
                state.tokens = None  # an earlier issuer's tokens are nothing to this one
            if state.tokens is not None and state.tokens.refresh_token:
                await self._refresh_or_drop(http)
                if self.state.tokens is not None and sent != await self._current():
                    return
            scopes = self._select_scopes(challenge, found)
            await self._obtain(http, found, scopes, challenge.said)

    async def step_up(
        self, http: aiohttp.ClientSession, challenge: Challenge, sent: str | None
    ) -> None:
        """A 403 insufficient_scope: authorize again for what we hold plus what is asked."""
        async with self._lock:
            if sent != await self._current():
                return
            held = self.state.scopes
            wanted = tuple(dict.fromkeys((*held, *(challenge.scope or ()))))
            if set(wanted) <= set(held):
                raise OAuthError(
                    f"{self.server_url} refused the token for lack of scope "
                    f"{' '.join(challenge.scope or ()) or '(unnamed)'}, which it already has"
                    + in_their_words(challenge.said)
                )
            if self.authorizer is None and self.grant == "authorization_code":
                # No browser here: name the login that would pass, and keep the scope for
                # it (`login` asks for what is held and what was refused: no loop).
                missing = tuple(scope for scope in wanted if scope not in held)
                async with self.store.lock(self.server_url):
                    self._reread()
                    refused = (*self.state.refused_scopes, *missing)
                    self.state.refused_scopes = tuple(dict.fromkeys(refused))
                    self._write()
                raise ScopeNeeded(self.server_url, missing, wanted, challenge.said)
            found = await self._discover(http, challenge)
            await self._obtain(http, found, wanted)

    async def login(self, http: aiohttp.ClientSession, challenge: Challenge) -> None:
        """Authorize now, whatever is stored (codex-mcp-client login)."""
        async with self._lock:
            found = await self._discover(http, challenge)
            self.state.tokens = None
            await self._obtain(http, found, self._select_scopes(challenge, found))

    def proof_headers(self, method: str, url: str) -> dict[str, str]:
        """A fresh DPoP proof for a request carrying a DPoP-bound token (none for Bearer)."""
        tokens = self.state.tokens
        if tokens is None or tokens.token_type.lower() != "dpop":
            return {}
        return {"DPoP": self._key().proof(method, url, tokens.access_token)}

    def use_nonce(self, url: str, nonce: str | None) -> bool:
        """The server asked for a DPoP nonce (RFC 9449 section 9): True when the request
        is worth sending again with it."""
        return self.dpop and self._key().remember_nonce(url, nonce)

    # -- the steps -------------------------------------------------------------------
    def _key(self) -> DpopKey:
        if self._dpop_key is None:
            self._dpop_key = DpopKey(self.state.dpop_key)
            if self.state.dpop_key is None:
                self.state.dpop_key = self._dpop_key.pem
        return self._dpop_key

    def _dpop_for(self, server: AuthServer) -> DpopKey | None:
        offered = server.dpop_algorithms or ()
        return self._key() if self.dpop and "ES256" in offered else None

    async def _current(self) -> str | None:
        tokens = self.state.tokens
        return tokens.authorization() if tokens is not None else None

    async def _discover(self, http: aiohttp.ClientSession, challenge: Challenge) -> Discovered:
        # Always afresh on a challenge: the server may have moved to another issuer.
        self._discovered = await discover(
            http, self.server_url, challenge.resource_metadata, fallback=self.fallback
        )
        return self._discovered

    def _select_scopes(self, challenge: Challenge, found: Discovered) -> tuple[str, ...]:
        """Ours if given; else the challenge's; else all the resource supports; plus
        offline_access (for a refresh token) when the authorization server lists it."""
        if self.scopes is not None:
            return self.scopes
        scopes = list(challenge.scope or found.scopes_supported or ())
        offered = found.server.scopes_supported or ()
        if (
            self.grant == "authorization_code"
            and OFFLINE_ACCESS in offered
            and OFFLINE_ACCESS not in scopes
        ):
            scopes.append(OFFLINE_ACCESS)
        return tuple(scopes)

    async def _refresh_or_drop(self, http: aiohttp.ClientSession) -> None:
        """Refresh the tokens, holding the store's lock throughout: a second process
        refreshing the same tokens waits, then finds the new ones instead of spending a
        refresh token that was rotated away (OAuth 2.1). Only a refusal of the grant drops
        them; a failure to ask (network, redirect, a malformed answer) keeps them."""
        async with self.store.lock(self.server_url):
            tried = self.state.tokens
            self._reread()
            state = self.state
            tokens = state.tokens
            if tokens is not None and not same_tokens(tokens, tried) and not tokens.expiring():
                return  # another process refreshed them meanwhile
            registration = state.registrations.get(state.issuer or "")
            if tokens is None or not tokens.refresh_token or registration is None:
                state.tokens = None
                return
            found = self._discovered
            if found is None or found.server.issuer != state.issuer:
                found = await discover(http, self.server_url, None)
                self._discovered = found
            form = {"grant_type": "refresh_token", "refresh_token": tokens.refresh_token}
            form["resource"] = found.resource
            try:
                state.tokens = await request_tokens(
                    http,
                    found.server,
                    registration,
                    form,
                    key=self.signing_key,
                    previous=tokens,
                    dpop=self._dpop_for(found.server),
                )
            except GrantRefused as exc:
                log.info(
                    "%s: refreshing the token failed (%s); authorizing again", self.server_url, exc
                )
                state.tokens = None
            self._write()

    async def _obtain(
        self,
        http: aiohttp.ClientSession,
        found: Discovered,
        scopes: tuple[str, ...],
        said: str | None = None,
    ) -> None:
        """New tokens for `scopes`; `said` is what the server's refusal said."""
        server = found.server
        state = self.state
        if self.grant != "authorization_code":
            registration = await self._registration(http, server, "", ())
            form = {"grant_type": self.grant, "resource": found.resource}
            if self.assertion is not None:
                form["grant_type"] = JWT_BEARER
                form["assertion"] = await self.assertion(http, server.issuer, found.resource)
            if scopes:
                form["scope"] = " ".join(scopes)
            tokens = await request_tokens(
                http, server, registration, form, key=self.signing_key, dpop=self._dpop_for(server)
            )
        else:
            if self.authorizer is None:
                if not (found.has_resource_metadata or found.server.from_metadata):
                    # No OAuth metadata anywhere: a static token, not a login, is wanted.
                    raise BearerTokenNeeded(self.server_url, said)
                raise NeedsLogin(self.server_url)
            registration = await self._registration(
                http, server, self.authorizer.redirect_uri, scopes
            )
            tokens = await self._authorization_code(http, found, registration, scopes)
        state.issuer = server.issuer
        state.tokens = tokens
        state.scopes = scopes
        state.refused_scopes = tuple(s for s in state.refused_scopes if s not in scopes)
        await self._save()

    async def _registration(
        self,
        http: aiohttp.ClientSession,
        server: AuthServer,
        redirect_uri: str,
        scopes: tuple[str, ...],
    ) -> Registration:
        """The client kept for `server` when it fits (its redirect URI, and the scopes it
        was registered for, when it was registered here); else a new registration."""
        known = self.state.registrations.get(server.issuer)
        if (
            known is not None
            and (known.redirect_uri == redirect_uri or not redirect_uri)
            and (self.profile.client_id is not None or known.covers(scopes))
        ):
            return known
        if self.grant != "authorization_code" and self.profile.client_id is None:
            raise OAuthError(f"the {self.grant} grant needs a pre-registered client_id")
        try:
            registration = await register(http, server, self.profile, redirect_uri, scopes)
        except OAuthError:
            if server.from_metadata:
                raise
            # The 2025-03-26 guess (no metadata: /register at the server's origin) failed:
            # most likely no OAuth server at all, which says more than the refusal.
            raise NotAnOAuthServer(self.server_url) from None
        self.state.registrations[server.issuer] = registration
        await self._save()
        return registration

    async def _authorization_code(
        self,
        http: aiohttp.ClientSession,
        found: Discovered,
        registration: Registration,
        scopes: tuple[str, ...],
    ) -> Tokens:
        assert self.authorizer is not None
        server, pkce = found.server, Pkce()
        redirect_uri = self.authorizer.redirect_uri
        query = {
            "response_type": "code",
            "client_id": registration.client_id,
            "redirect_uri": redirect_uri,
            "code_challenge": pkce.challenge,
            "code_challenge_method": "S256",
            "state": pkce.state,
            "resource": found.resource,
        }
        if scopes:
            query["scope"] = " ".join(scopes)
        if OFFLINE_ACCESS in scopes:
            # OpenID Connect Core section 11: an OpenID provider ignores offline_access
            # (no refresh token) unless the user is asked to consent; a plain OAuth server
            # ignores a parameter it does not know (RFC 6749 section 3.1).
            query["prompt"] = "consent"
        require_secure(server.authorization_endpoint, "authorization_endpoint")
        separator = "&" if "?" in server.authorization_endpoint else "?"
        callback = await self.authorizer.authorize(
            server.authorization_endpoint + separator + urlencode(query)
        )
        code = _code_from(callback, pkce.state, server)
        form = {
            "grant_type": "authorization_code",
            "code": code,
            "redirect_uri": redirect_uri,
            "code_verifier": pkce.verifier,
            "resource": found.resource,
        }
        return await request_tokens(
            http, server, registration, form, key=self.signing_key, dpop=self._dpop_for(server)
        )


def _code_from(callback: str, state: str, server: AuthServer) -> str:
    """The code of the redirect back to us, once it is shown to answer our request (`state`,
    compared in constant time) from the issuer we asked (RFC 9207: `iss` compared as a plain
    string). Until then nothing in it is believed, its error text included."""
    params = {k: v[0] for k, v in parse_qs(urlsplit(callback).query).items() if v}
    if not hmac.compare_digest(params.get("state", "").encode(), state.encode()):
        raise OAuthError("the authorization response does not answer our request (state)")
    iss = params.get("iss")
    if server.from_metadata:
        if iss is not None and iss != server.issuer:
            raise OAuthError(
                f"the authorization response comes from {shown(iss)}, not {server.issuer!r}"
            )
        if iss is None and server.iss_parameter_supported:
            raise OAuthError(f"{server.issuer} promised an iss parameter and sent none")
    if "error" in params:
        detail = params.get("error_description") or params["error"]
        raise OAuthError(f"{server.issuer} refused the authorization: {shown(detail)}")
    code = params.get("code")
    if not code:
        raise OAuthError("the authorization response carries no code")
    return code
