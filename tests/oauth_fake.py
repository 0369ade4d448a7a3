"""An OAuth-protected Streamable HTTP MCP server and its authorization server in one
aiohttp app, for the client's login tests: resource metadata, server metadata, dynamic
registration, an authorization endpoint that approves at once (redirecting back with a
code), a token endpoint (authorization code with PKCE, refresh), and /mcp that wants a
token it issued. It records what it was asked."""

from __future__ import annotations

import base64
import hashlib
import itertools
import json
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlencode

from aiohttp import web


@dataclass
class OAuthFake:
    expires_in: int = 3600
    #: OAuth 2.1 rotation: a refresh token is good once, then it and its access token die.
    rotate: bool = False
    log: list[str] = field(default_factory=list)
    tokens: dict[str, str] = field(default_factory=dict)  # access token -> refresh token
    _codes: dict[str, str] = field(default_factory=dict)  # code -> code_challenge
    _count: itertools.count[int] = field(default_factory=itertools.count)
    base: str = ""

    def app(self) -> web.Application:
        app = web.Application()
        app.router.add_get("/.well-known/oauth-protected-resource/mcp", self.resource)
        app.router.add_get("/.well-known/oauth-authorization-server", self.metadata)
        app.router.add_post("/register", self.register)
        app.router.add_get("/authorize", self.authorize)
        app.router.add_post("/token", self.token)
        app.router.add_route("*", "/mcp", self.mcp)
        return app

    def _base(self, request: web.Request) -> str:
        self.base = f"{request.scheme}://{request.host}"
        return self.base

    async def resource(self, request: web.Request) -> web.Response:
        base = self._base(request)
        self.log.append("resource-metadata")
        return web.json_response({"resource": f"{base}/mcp", "authorization_servers": [base]})

    async def metadata(self, request: web.Request) -> web.Response:
        base = self._base(request)
        self.log.append("server-metadata")
        return web.json_response(
            {
                "issuer": base,
                "authorization_endpoint": f"{base}/authorize",
                "token_endpoint": f"{base}/token",
                "registration_endpoint": f"{base}/register",
                "response_types_supported": ["code"],
                "code_challenge_methods_supported": ["S256"],
                "token_endpoint_auth_methods_supported": ["none"],
                "authorization_response_iss_parameter_supported": True,
            }
        )

    async def register(self, request: web.Request) -> web.Response:
        body = await request.json()
        self.log.append("register")
        return web.json_response(
            {"client_id": f"client-{next(self._count)}", "redirect_uris": body["redirect_uris"]},
            status=201,
        )

    async def authorize(self, request: web.Request) -> web.Response:
        query = request.query
        self.log.append("authorize")
        code = f"code-{next(self._count)}"
        self._codes[code] = query["code_challenge"]
        back = {"code": code, "state": query["state"], "iss": self._base(request)}
        raise web.HTTPFound(f"{query['redirect_uri']}?{urlencode(back)}")

    async def token(self, request: web.Request) -> web.Response:
        form = await request.post()
        grant = form.get("grant_type")
        self.log.append(f"token:{grant}")
        if grant == "authorization_code":
            challenge = self._codes.pop(str(form.get("code")), None)
            verifier = str(form.get("code_verifier", ""))
            digest = hashlib.sha256(verifier.encode()).digest()
            if challenge != base64.urlsafe_b64encode(digest).rstrip(b"=").decode():
                return web.json_response({"error": "invalid_grant"}, status=400)
        elif grant == "refresh_token":
            if str(form.get("refresh_token")) not in self.tokens.values():
                self.log.append("invalid_grant")
                return web.json_response({"error": "invalid_grant"}, status=400)
            if self.rotate:
                used = str(form.get("refresh_token"))
                self.tokens = {a: r for a, r in self.tokens.items() if r != used}
        else:
            return web.json_response({"error": "unsupported_grant_type"}, status=400)
        access, refresh = f"access-{next(self._count)}", f"refresh-{next(self._count)}"
        self.tokens[access] = refresh
        return web.json_response(
            {
                "access_token": access,
                "token_type": "Bearer",
                "expires_in": self.expires_in,
                "refresh_token": refresh,
            }
        )

    async def mcp(self, request: web.Request) -> web.Response:
        base = self._base(request)
        token = request.headers.get("Authorization", "").removeprefix("Bearer ")
        if token not in self.tokens:
            self.log.append("401")
            metadata = f"{base}/.well-known/oauth-protected-resource/mcp"
            return web.json_response(
                {"error": "invalid_token"},
                status=401,
                headers={"WWW-Authenticate": f'Bearer resource_metadata="{metadata}"'},
            )
        if request.method != "POST":
            return web.Response(status=405)
        message: Any = json.loads(await request.read())
        if "id" not in message:
            return web.Response(status=202)
        self.log.append(f"mcp:{message['method']}:{token}")
        result: dict[str, Any] = {}
        if message["method"] == "initialize":
            result = {
                "protocolVersion": message["params"]["protocolVersion"],
                "capabilities": {"tools": {}},
                "serverInfo": {"name": "protected", "version": "1"},
            }
        elif message["method"] == "tools/list":
            result = {"tools": [{"name": "whoami", "inputSchema": {"type": "object"}}]}
        elif message["method"] == "tools/call":
            result = {"content": [{"type": "text", "text": f"token {token}"}]}
        return web.json_response({"jsonrpc": "2.0", "id": message["id"], "result": result})
