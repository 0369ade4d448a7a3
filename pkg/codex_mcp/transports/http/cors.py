"""CORS for browser clients (`--cors-origin`): off unless origins are listed (specs/oauth.md,
"CORS")."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from aiohttp import web
from aiohttp.typedefs import Handler, Middleware

from .errors import error_response, refusal
from .security import Guard

ALLOW_METHODS: Final = "GET, POST, DELETE"
EXPOSE_HEADERS: Final = "Mcp-Session-Id, Mcp-Protocol-Version, WWW-Authenticate, Retry-After"
PREFLIGHT_MAX_AGE: Final = "600"


def _normalized(origin: str) -> str:
    return origin.strip().lower().rstrip("/")


class Cors:
    def __init__(self, origins: Sequence[str], guard: Guard) -> None:
        self.origins = frozenset(_normalized(origin) for origin in origins)
        self.guard = guard

    def install(self, app: web.Application, admission: Middleware) -> None:
        """The preflight middleware goes before the admission (a preflight carries no
        credential); the headers go on every response, streams and refusals included."""
        app.middlewares.insert(app.middlewares.index(admission), self.preflight)
        app.on_response_prepare.append(self._headers)

    def listed(self, request: web.Request) -> str | None:
        origin = request.headers.get("Origin")
        return origin if origin is not None and _normalized(origin) in self.origins else None

    @web.middleware
    async def preflight(self, request: web.Request, handler: Handler) -> web.StreamResponse:
        if request.method != "OPTIONS" or "Access-Control-Request-Method" not in request.headers:
            return await handler(request)
        denied = self.guard.check_host_and_origin(request)
        if denied is not None:
            return denied
        origin = self.listed(request)
        if origin is None:
            shown = request.headers.get("Origin")
            message = f"Origin {shown!r} is not allowed to call this server"
            return refusal(error_response(403, message), "origin")
        headers = {
            "Access-Control-Allow-Methods": ALLOW_METHODS,
            "Access-Control-Max-Age": PREFLIGHT_MAX_AGE,
            "Vary": "Origin, Access-Control-Request-Method, Access-Control-Request-Headers",
        }
        asked = request.headers.get("Access-Control-Request-Headers")
        if asked:
            headers["Access-Control-Allow-Headers"] = asked
        return web.Response(status=204, headers=headers)

    async def _headers(self, request: web.Request, response: web.StreamResponse) -> None:
        origin = self.listed(request)
        if origin is None or self.guard.check_host_and_origin(request) is not None:
            return  # (a foreign Host is refused without CORS, whoever the page is)
        response.headers["Access-Control-Allow-Origin"] = origin
        if request.method != "OPTIONS":
            response.headers["Access-Control-Expose-Headers"] = EXPOSE_HEADERS
        vary = response.headers.get("Vary")
        if vary is None:
            response.headers["Vary"] = "Origin"
        elif "origin" not in vary.lower():
            response.headers["Vary"] = f"{vary}, Origin"
