"""Assertions for the JWT-bearer grant (RFC 7523): `StaticAssertion`, `IdJagExchange`
(specs/oauth.md, "The client's OAuth")."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass

import aiohttp

from .endpoints import basic_authorization, error_detail, exchange, printable_token
from .errors import OAuthError

JWT_BEARER = "urn:ietf:params:oauth:grant-type:jwt-bearer"
TOKEN_EXCHANGE = "urn:ietf:params:oauth:grant-type:token-exchange"
ID_TOKEN = "urn:ietf:params:oauth:token-type:id_token"
ID_JAG = "urn:ietf:params:oauth:token-type:id-jag"

#: (http, audience, resource) -> the assertion
AssertionSource = Callable[[aiohttp.ClientSession, str, str], Awaitable[str]]


@dataclass(frozen=True, slots=True)
class StaticAssertion:
    jwt: str

    async def __call__(self, http: aiohttp.ClientSession, audience: str, resource: str) -> str:
        return self.jwt


@dataclass(frozen=True, slots=True)
class IdJagExchange:
    token_endpoint: str
    id_token: str
    client_id: str | None = None
    client_secret: str | None = None

    async def __call__(self, http: aiohttp.ClientSession, audience: str, resource: str) -> str:
        form = {
            "grant_type": TOKEN_EXCHANGE,
            "subject_token": self.id_token,
            "subject_token_type": ID_TOKEN,
            "requested_token_type": ID_JAG,
            "audience": audience,
            "resource": resource,
        }
        headers = {"Accept": "application/json"}
        if self.client_id is not None and self.client_secret is not None:
            headers.update(basic_authorization(self.client_id, self.client_secret))
        elif self.client_id is not None:
            form["client_id"] = self.client_id
        status, body, _ = await exchange(
            http, self.token_endpoint, "token exchange endpoint", data=form, headers=headers
        )
        assertion = printable_token(body.get("access_token")) if isinstance(body, dict) else None
        if status >= 300 or assertion is None:
            raise OAuthError(
                f"{self.token_endpoint} refused the token exchange: {error_detail(body)}"
            )
        return assertion
