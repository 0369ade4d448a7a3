"""Who we are at an authorization server: a pre-registered client, a client ID metadata
document (our client_id is the URL of a JSON document describing us, when the server
supports them), or a client registered on the spot (RFC 7591 dynamic registration)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import aiohttp

from .discovery import AuthServer
from .errors import OAuthError
from .store import Registration


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
    http: aiohttp.ClientSession, server: AuthServer, profile: ClientProfile, redirect_uri: str
) -> Registration:
    if profile.client_id is not None:
        method = profile.auth_method or pick_auth_method(server, profile.client_secret is not None)
        return Registration(profile.client_id, profile.client_secret, method, redirect_uri)
    if server.client_id_metadata_documents and profile.metadata_url:
        return Registration(profile.metadata_url, None, "none", redirect_uri)
    if server.registration_endpoint is None:
        raise OAuthError(
            f"{server.issuer} offers no dynamic registration: give a pre-registered client "
            "(client_id and client_secret)"
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
    try:
        async with http.post(server.registration_endpoint, json=metadata) as resp:
            body: Any = await resp.json(content_type=None)
            status = resp.status
    except (aiohttp.ClientError, ValueError) as exc:
        raise OAuthError(f"{server.registration_endpoint}: registration failed: {exc}") from exc
    if status >= 400 or not isinstance(body, dict) or not isinstance(body.get("client_id"), str):
        raise OAuthError(f"{server.registration_endpoint} refused to register us: {body}")
    given_secret, given_method = body.get("client_secret"), body.get("token_endpoint_auth_method")
    secret = given_secret if isinstance(given_secret, str) else None
    method = (
        given_method
        if isinstance(given_method, str)
        else pick_auth_method(server, secret is not None)
    )
    return Registration(body["client_id"], secret, method, redirect_uri)
