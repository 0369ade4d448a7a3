"""Who we are at an authorization server (specs/oauth.md, "The client's OAuth": who we are)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import aiohttp

from .discovery import AuthServer
from .endpoints import error_detail, exchange, printable_token
from .errors import OAuthError, shown
from .store import AUTH_METHODS, Registration


@dataclass(frozen=True, slots=True)
class ClientProfile:
    """How the client describes itself, and any identity it was given in advance."""

    client_name: str = "codex-mcp"
    #: The URL of our client ID metadata document, used when the server supports them.
    metadata_url: str | None = None
    #: A pre-registered client (used as it is, at any server).
    client_id: str | None = None
    client_secret: str | None = None
    auth_method: str | None = None


def pick_auth_method(server: AuthServer, has_secret: bool) -> str:
    """The token endpoint auth method to use, from what the server supports."""
    supported = server.token_auth_methods
    if not has_secret:
        return "none"
    if supported is None:
        return "client_secret_basic"  # RFC 8414's default
    for method in ("client_secret_basic", "client_secret_post"):
        if method in supported:
            return method
    return supported[0] if supported else "client_secret_basic"


async def register(
    http: aiohttp.ClientSession,
    server: AuthServer,
    profile: ClientProfile,
    redirect_uri: str,
    scopes: tuple[str, ...] = (),
) -> Registration:
    """Our client at `server`, registered (when it is registered here) for `scopes`."""
    if profile.client_id is not None:
        method = profile.auth_method or pick_auth_method(server, profile.client_secret is not None)
        return Registration(profile.client_id, profile.client_secret, method, redirect_uri)
    if server.client_id_metadata_documents and profile.metadata_url:
        return Registration(profile.metadata_url, None, "none", redirect_uri)
    if server.registration_endpoint is None:
        raise OAuthError(
            f"{server.issuer} offers no dynamic registration: give a client registered there "
            "in advance: --client-id ID, and --client-secret SECRET if it has one "
            "(ClientProfile(client_id=..., client_secret=...) in code)"
        )
    supported = server.token_auth_methods
    asked = "none" if supported is None or "none" in supported else pick_auth_method(server, True)
    metadata: dict[str, Any] = {
        "client_name": profile.client_name,
        "redirect_uris": [redirect_uri],
        "grant_types": ["authorization_code", "refresh_token"],
        "response_types": ["code"],
        "token_endpoint_auth_method": asked,
        "application_type": "native",
    }
    offered = set(server.scopes_supported or ())
    if scopes and set(scopes) <= offered:
        # RFC 7591 section 2: a server may limit a client to the scopes it registered for
        # (the official MCP SDK's does, to its defaults when none is named). Named only
        # when the server lists them all: one that does not govern a scope (an OpenID
        # provider, for a resource's scopes) refuses a registration that names it.
        metadata["scope"] = " ".join(scopes)
    endpoint = server.registration_endpoint
    status, body, _ = await exchange(http, endpoint, "registration endpoint", json=metadata)
    if status >= 300 or not isinstance(body, dict):
        raise OAuthError(f"{endpoint} refused to register us: {error_detail(body)}")
    client_id = printable_token(body.get("client_id"))
    if client_id is None:
        raise OAuthError(
            f"{endpoint} registered us without a usable client_id: {shown(body.get('client_id'))}"
        )
    given_secret, given_method = body.get("client_secret"), body.get("token_endpoint_auth_method")
    secret = printable_token(given_secret)
    if given_secret is not None and secret is None:
        raise OAuthError(f"{endpoint} gave us a client_secret that is not usable")
    method = (
        given_method
        if given_method in AUTH_METHODS
        else pick_auth_method(server, secret is not None)
    )
    return Registration(client_id, secret, str(method), redirect_uri, scopes)
