"""`codex-mcp-client login URL` and `logout URL`: the browser flow once, its tokens kept
in the store for every later client of that server (the CLI's other commands, the gateway)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from .browser import LoopbackAuthorizer
from .flow import OAuth
from .registration import ClientProfile
from .store import Store, TokenStore


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


def logout(url: str, *, store: Store | None = None) -> dict[str, Any]:
    """Forget the server's tokens and registrations."""
    store = store if store is not None else TokenStore()
    return {"server": url, "forgotten": store.forget(url)}
