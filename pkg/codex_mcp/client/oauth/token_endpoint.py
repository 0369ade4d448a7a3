"""Requests to the token endpoint, authenticated the way the client was registered
(specs/oauth.md, "The client's OAuth")."""

from __future__ import annotations

import time
import uuid
from dataclasses import dataclass
from typing import Any

import aiohttp

from .discovery import AuthServer
from .dpop import DpopKey
from .endpoints import basic_authorization, error_detail, exchange
from .errors import GrantRefused, OAuthError
from .store import Registration, Tokens

ASSERTION_TYPE = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"


@dataclass(frozen=True, slots=True)
class SigningKey:
    """A private key (PEM) for private_key_jwt, and its algorithm."""

    pem: str
    algorithm: str = "ES256"


def _assertion(client_id: str, audience: str, key: SigningKey) -> str:
    import jwt  # PyJWT, only for this method

    now = int(time.time())
    claims = {
        "iss": client_id,
        "sub": client_id,
        "aud": audience,
        "iat": now,
        "exp": now + 300,
        "jti": str(uuid.uuid4()),
    }
    return jwt.encode(claims, key.pem, algorithm=key.algorithm)


def authenticate(
    form: dict[str, str],
    client: Registration,
    server: AuthServer,
    key: SigningKey | None = None,
) -> dict[str, str]:
    """Add the client's credentials to the form; returns the headers to send with it."""
    method = client.auth_method
    # Always in the form, Basic or not: RFC 6749 allows it beside Basic (section 4.1.3 asks
    # for it of a client that does not authenticate), and some servers require it there
    # whatever the method (the official MCP SDK's token endpoint: "Missing client_id").
    form["client_id"] = client.client_id
    if method == "client_secret_basic" and client.client_secret is not None:
        return basic_authorization(client.client_id, client.client_secret)
    if method == "client_secret_post" and client.client_secret is not None:
        form["client_secret"] = client.client_secret
    elif method == "private_key_jwt":
        if key is None:
            raise OAuthError("private_key_jwt needs the client's signing key")
        form["client_assertion_type"] = ASSERTION_TYPE
        form["client_assertion"] = _assertion(client.client_id, server.issuer, key)
    return {}


async def request_tokens(
    http: aiohttp.ClientSession,
    server: AuthServer,
    client: Registration,
    form: dict[str, str],
    *,
    key: SigningKey | None = None,
    previous: Tokens | None = None,
    dpop: DpopKey | None = None,
) -> Tokens:
    """One grant. With `dpop`, the request carries a proof (and is sent once more with
    the nonce the server asks for: RFC 9449 section 8). A refusal of the grant (HTTP 400
    or 401 with an OAuth error) raises GrantRefused; any other failure OAuthError."""
    endpoint = server.token_endpoint
    headers = {"Accept": "application/json", **authenticate(form, client, server, key)}
    nonce: str | None = None
    for _ in range(2):
        if dpop is not None:
            headers["DPoP"] = dpop.proof("POST", endpoint)
        status, body, nonce = await _post_form(http, endpoint, form, headers)
        asked_nonce = isinstance(body, dict) and body.get("error") == "use_dpop_nonce"
        if not (dpop is not None and asked_nonce and dpop.remember_nonce(endpoint, nonce)):
            break
    grant = form["grant_type"]
    if status in (400, 401) and isinstance(body, dict) and isinstance(body.get("error"), str):
        raise GrantRefused(f"{endpoint} refused the {grant} grant: {error_detail(body)}")
    if status >= 300 or not isinstance(body, dict):
        raise OAuthError(
            f"{endpoint} answered the {grant} grant with HTTP {status}: {error_detail(body)}"
        )
    return Tokens.from_response(body, previous, where=f"{endpoint} ({grant} grant)")


async def _post_form(
    http: aiohttp.ClientSession, endpoint: str, form: dict[str, str], headers: dict[str, str]
) -> tuple[int, Any, str | None]:
    """The status, JSON body and DPoP nonce of one token request (never redirected)."""
    status, body, answer = await exchange(
        http, endpoint, "token endpoint", data=form, headers=headers
    )
    return status, body, answer.get("DPoP-Nonce")
