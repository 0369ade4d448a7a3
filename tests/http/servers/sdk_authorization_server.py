"""A real authorization server built on the official MCP SDK's handlers
(`mcp.server.auth.routes.create_auth_routes`: metadata, /authorize, /token, /register,
/revoke), as its simple-auth example wires them, with an in-memory
`OAuthAuthorizationServerProvider` that approves every authorization at once (the user
said yes) and issues RS256 JWT access tokens, so `codex-mcp-http --oauth-issuer` can verify
them with the keys published at /jwks (named in the metadata as `jwks_uri`; the SDK's
metadata model has no such field).

    python sdk_authorization_server.py

Prints {"issuer": URL} once it listens on 127.0.0.1, then one JSON line per token request:
{"token_request": {form fields, client_secret left out}, "basic": bool}.
"""

from __future__ import annotations

import json
import secrets
import socket
import sys
import time
from typing import Any
from urllib.parse import parse_qsl

import jwt
import uvicorn
from cryptography.hazmat.primitives.asymmetric import rsa
from mcp.server.auth.provider import (
    AccessToken,
    AuthorizationCode,
    AuthorizationParams,
    RefreshToken,
    construct_redirect_uri,
)
from mcp.server.auth.routes import build_metadata, create_auth_routes
from mcp.server.auth.settings import ClientRegistrationOptions, RevocationOptions
from mcp.shared.auth import OAuthClientInformationFull, OAuthToken
from pydantic import AnyHttpUrl
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route
from starlette.types import ASGIApp, Message, Receive, Scope, Send

#: Short enough that the next command refreshes first (the client refreshes within 60 s).
EXPIRES_IN = 30
KEY = rsa.generate_private_key(public_exponent=65537, key_size=2048)
KID = "sdk-as-key-1"


class Provider:
    """In memory: clients, codes, refresh tokens. Every authorization is approved."""

    def __init__(self, issuer: str) -> None:
        self.issuer = issuer
        self.clients: dict[str, OAuthClientInformationFull] = {}
        self.codes: dict[str, AuthorizationCode] = {}
        self.refresh_tokens: dict[str, RefreshToken] = {}

    async def get_client(self, client_id: str) -> OAuthClientInformationFull | None:
        return self.clients.get(client_id)

    async def register_client(self, client_info: OAuthClientInformationFull) -> None:
        assert client_info.client_id is not None
        self.clients[client_info.client_id] = client_info

    async def authorize(
        self, client: OAuthClientInformationFull, params: AuthorizationParams
    ) -> str:
        code = secrets.token_urlsafe(32)
        self.codes[code] = AuthorizationCode(
            code=code,
            scopes=params.scopes or [],
            expires_at=time.time() + 300,
            client_id=client.client_id or "",
            code_challenge=params.code_challenge,
            redirect_uri=params.redirect_uri,
            redirect_uri_provided_explicitly=params.redirect_uri_provided_explicitly,
            resource=params.resource,
            subject="user-1",
        )
        return construct_redirect_uri(str(params.redirect_uri), code=code, state=params.state)

    async def load_authorization_code(
        self, client: OAuthClientInformationFull, authorization_code: str
    ) -> AuthorizationCode | None:
        return self.codes.get(authorization_code)

    async def exchange_authorization_code(
        self, client: OAuthClientInformationFull, authorization_code: AuthorizationCode
    ) -> OAuthToken:
        self.codes.pop(authorization_code.code, None)
        return self._tokens(
            authorization_code.client_id, authorization_code.scopes, authorization_code.resource
        )

    async def load_refresh_token(
        self, client: OAuthClientInformationFull, refresh_token: str
    ) -> RefreshToken | None:
        return self.refresh_tokens.get(refresh_token)

    async def exchange_refresh_token(
        self, client: OAuthClientInformationFull, refresh_token: RefreshToken, scopes: list[str]
    ) -> OAuthToken:
        self.refresh_tokens.pop(refresh_token.token, None)  # rotated
        return self._tokens(
            refresh_token.client_id, scopes or refresh_token.scopes, refresh_token.resource
        )

    async def load_access_token(self, token: str) -> AccessToken | None:
        return None  # tokens are JWTs: the resource server verifies them itself

    async def revoke_token(self, token: AccessToken | RefreshToken) -> None:
        self.refresh_tokens.pop(token.token, None)

    def _tokens(self, client_id: str, scopes: list[str], resource: str | None) -> OAuthToken:
        now = int(time.time())
        claims: dict[str, Any] = {
            "iss": self.issuer,
            "sub": "user-1",
            "client_id": client_id,
            "scope": " ".join(scopes),
            "iat": now,
            "exp": now + EXPIRES_IN,
        }
        if resource is not None:
            claims["aud"] = resource
        access = jwt.encode(claims, KEY, algorithm="RS256", headers={"kid": KID})
        refresh = secrets.token_urlsafe(32)
        self.refresh_tokens[refresh] = RefreshToken(
            token=refresh, client_id=client_id, scopes=scopes, resource=resource, subject="user-1"
        )
        return OAuthToken(
            access_token=access,
            token_type="Bearer",
            expires_in=EXPIRES_IN,
            scope=" ".join(scopes),
            refresh_token=refresh,
        )


class RecordTokenRequests:
    """Prints each /token request's form (what the client sent) before the SDK's handler
    reads it again from the replayed body."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["path"] != "/token":
            await self.app(scope, receive, send)
            return
        messages: list[Message] = []
        body = b""
        while True:
            message = await receive()
            messages.append(message)
            body += message.get("body", b"")
            if not message.get("more_body"):
                break
        form = {k: v for k, v in parse_qsl(body.decode()) if k != "client_secret"}
        headers = dict(scope["headers"])
        basic = headers.get(b"authorization", b"").lower().startswith(b"basic ")
        print(json.dumps({"token_request": form, "basic": basic}), flush=True)

        async def replay() -> Message:
            return messages.pop(0) if messages else {"type": "http.disconnect"}

        await self.app(scope, replay, send)


def main() -> None:
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    issuer = f"http://127.0.0.1:{port}/"  # pydantic's AnyHttpUrl spells it with the slash
    provider = Provider(issuer)
    registration = ClientRegistrationOptions(
        enabled=True, valid_scopes=["mcp", "echo.use"], default_scopes=["mcp"]
    )
    revocation = RevocationOptions(enabled=True)
    metadata = build_metadata(AnyHttpUrl(issuer), None, registration, revocation)
    document = {**metadata.model_dump(mode="json", exclude_none=True), "jwks_uri": issuer + "jwks"}
    jwk = json.loads(jwt.algorithms.RSAAlgorithm.to_jwk(KEY.public_key()))
    jwks = {"keys": [{**jwk, "kid": KID, "alg": "RS256", "use": "sig"}]}

    async def serve_jwks(request: Request) -> JSONResponse:
        return JSONResponse(jwks)

    async def serve_metadata(request: Request) -> JSONResponse:
        return JSONResponse(document)

    routes = [
        # First, so it answers before the SDK's own metadata route: the same document
        # (build_metadata) with jwks_uri filled in.
        Route("/.well-known/oauth-authorization-server", serve_metadata),
        Route("/jwks", serve_jwks),
        *create_auth_routes(
            provider,
            AnyHttpUrl(issuer),
            client_registration_options=registration,
            revocation_options=revocation,
        ),
    ]
    app = RecordTokenRequests(Starlette(routes=routes))
    print(json.dumps({"issuer": issuer}), flush=True)
    config = uvicorn.Config(app, log_level="warning", lifespan="off")
    uvicorn.Server(config).run(sockets=[sock])


if __name__ == "__main__":
    sys.exit(main())
