"""`codex-mcp-client login URL` and `logout URL`: the browser flow once, its tokens kept
in the store for every later client of that server (the CLI's other commands, the gateway)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from .browser import LoopbackAuthorizer
from .discovery import auth_server
from .endpoints import exchange
from .errors import OAuthError
from .flow import OAuth
from .registration import ClientProfile
from .store import ServerAuth, Store, TokenStore
from .token_endpoint import authenticate


async def login(
    url: str,
    *,
    store: Store | None = None,
    profile: ClientProfile | None = None,
    scopes: Sequence[str] | None = None,
    open_browser: bool = True,
    timeout: float = 300.0,
    mode: str = "legacy",
) -> dict[str, Any]:
    """Authorize with the server's authorization server through the user's browser and
    keep the tokens. The server's first refusal starts the flow; one that never refuses
    needs no login (and none is kept)."""
    from ..client import Client

    store = store if store is not None else TokenStore()
    async with store.lock(url):
        kept = store.load(url)
        kept.tokens = None  # logging in again means new tokens, whatever was kept
        store.save(url, kept)
    if scopes is None and kept.refused_scopes:
        # A tool was refused for lack of these: ask for them with what was held.
        scopes = tuple(dict.fromkeys((*kept.scopes, *kept.refused_scopes)))
    async with LoopbackAuthorizer(open_browser=open_browser, timeout=timeout) as browser:
        auth = OAuth(store=store, profile=profile, authorizer=browser, scopes=scopes)
        async with Client.http(url, auth=auth, mode=mode, timeout=timeout) as client:
            await client.list_tools(timeout=timeout)
    kept = store.load(url)
    if kept.tokens is None:
        return {"server": url, "logged_in": False, "reason": "the server asked for no login"}
    return {
        "server": url,
        "logged_in": True,
        "issuer": kept.issuer,
        "scope": kept.tokens.scope or " ".join(kept.scopes) or None,
        "expires_at": kept.tokens.expires_at,
        "refreshable": kept.tokens.refresh_token is not None,
    }


async def logout(url: str, *, store: Store | None = None) -> dict[str, Any]:
    """Hand the refresh token back to its issuer (RFC 7009, where it publishes a
    revocation endpoint), then forget the server's tokens and registrations. They are
    forgotten whether or not the issuer could be told: `revoked` says which."""
    store = store if store is not None else TokenStore()
    async with store.lock(url):
        kept = store.load(url)
        revoked: bool | str = False
        if kept.tokens is not None and kept.tokens.refresh_token and kept.issuer:
            revoked = await _revoke(kept, kept.tokens.refresh_token)
        forgotten = store.forget(url)
    answer: dict[str, Any] = {"server": url, "forgotten": forgotten, "revoked": revoked is True}
    if isinstance(revoked, str):
        answer["not_revoked"] = revoked
    return answer


async def _revoke(kept: ServerAuth, refresh_token: str) -> bool | str:
    """True once the issuer took the token back; else why not (a line for the user)."""
    import aiohttp

    issuer = kept.issuer or ""
    registration = kept.registrations.get(issuer)
    if registration is None:
        return "no client registration is kept for the issuer"
    try:
        async with aiohttp.ClientSession() as http:
            server = await auth_server(http, issuer)
            if server is None or server.revocation_endpoint is None:
                return f"{issuer} publishes no revocation_endpoint"
            form = {"token": refresh_token, "token_type_hint": "refresh_token"}
            headers = authenticate(form, registration, server)
            status, _, _ = await exchange(
                http, server.revocation_endpoint, "revocation_endpoint", data=form, headers=headers
            )
    except OAuthError as exc:
        return str(exc)
    # RFC 7009 section 2.2: 200 whether or not the token was still valid.
    return True if status == 200 else f"the revocation_endpoint answered HTTP {status}"
