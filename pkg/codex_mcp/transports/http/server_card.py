"""Serving the server card at `<prefix>/mcp/server-card` (`--server-card`, off by default: the
extension is a draft; specs/http.md, "The server card")."""

from __future__ import annotations

import hashlib
from typing import TYPE_CHECKING, Final

import orjson
from aiohttp import web
from yarl import URL

from ...core.server_card import CARD_SUFFIX, MEDIA_TYPE, build_card
from ...core.versions import STATELESS_VERSIONS, SUPPORTED_VERSIONS
from .config import HttpConfig
from .security import Guard, parse_host

if TYPE_CHECKING:
    from ...core.server import ServerCore

#: The extension's discovery text asks for these (docs/discovery.md: CORS, Caching).
CORS_HEADERS: Final = {
    "Access-Control-Allow-Origin": "*",
    "Access-Control-Allow-Methods": "GET",
    "Access-Control-Allow-Headers": "Content-Type, If-None-Match",
    "Access-Control-Expose-Headers": "ETag",
}
CACHE_CONTROL: Final = "public, max-age=3600"
#: The card names the URL it was asked at, which these request headers decide.
VARY: Final = "Host, X-Forwarded-Host, X-Forwarded-Proto"
#: If-None-Match values past this length are not looked at (the card is simply sent).
_MATCH_MAX = 4096


def card_path(config: HttpConfig) -> str:
    return f"{config.prefix}/mcp{CARD_SUFFIX}"


class ServerCardRoute:
    """The card of this server (a gateway's describes the gateway, not its children): its
    name, version and description from its initialize answer, and its endpoint's public
    URL, which is --oauth-resource when set, else the URL the request reached (the Host, or
    a trusted proxy's X-Forwarded-Host and X-Forwarded-Proto) under --base-path."""

    def __init__(self, core: ServerCore, config: HttpConfig, guard: Guard) -> None:
        self.core = core
        self.config = config
        self.guard = guard
        self.path = card_path(config)
        self.authorization = bool(config.bearer_tokens or config.oauth_issuer)
        # Newest first: the per-request revision, then those negotiated by initialize.
        self.versions = [*STATELESS_VERSIONS, *SUPPORTED_VERSIONS]

    def add_routes(self, app: web.Application) -> None:
        app.router.add_get(self.path, self.get)
        app.router.add_route("OPTIONS", self.path, self.options)

    def endpoint(self, request: web.Request) -> tuple[str, str | None]:
        """The Streamable HTTP endpoint's public URL for `request`, and its host name."""
        resource = self.config.oauth_resource
        if resource:  # checked as a URL at start (exposure.check_oauth)
            return resource, URL(resource).host
        forwarded = self.guard.trusted_forward(request)
        host = forwarded if forwarded is not None else parse_host(request.headers.get("Host", ""))
        scheme = "https" if self.guard.is_https(request) else "http"
        path = f"{self.config.prefix}/mcp"
        if host is None:  # no usable Host (hosts unchecked off loopback): where we listen
            return f"{scheme}://{self.config.host}:{self.config.port}{path}", None
        authority = host.name if host.port is None else f"{host.name}:{host.port}"
        return f"{scheme}://{authority}{path}", host.name

    def document(self, request: web.Request) -> bytes:
        endpoint, host = self.endpoint(request)
        card = build_card(
            self.core.server_info,
            self.core.instructions,
            endpoint=endpoint,
            host=host,
            versions=self.versions,
            authorization=self.authorization,
        )
        return orjson.dumps(card)

    async def get(self, request: web.Request) -> web.Response:
        body = self.document(request)
        etag = '"' + hashlib.sha256(body).hexdigest()[:32] + '"'
        headers = {
            **CORS_HEADERS,
            "Cache-Control": CACHE_CONTROL,
            "ETag": etag,
            "Vary": VARY,
        }
        if _matches(request.headers.get("If-None-Match", ""), etag):
            return web.Response(status=304, headers=headers)
        return web.Response(body=body, headers={**headers, "Content-Type": MEDIA_TYPE})

    async def options(self, request: web.Request) -> web.Response:
        return web.Response(status=204, headers={**CORS_HEADERS, "Access-Control-Max-Age": "600"})


def _matches(if_none_match: str, etag: str) -> bool:
    """RFC 9110's weak comparison of If-None-Match against our one tag."""
    if not if_none_match or len(if_none_match) > _MATCH_MAX:
        return False
    for candidate in if_none_match.split(","):
        tag = candidate.strip()
        if tag == "*" or tag.removeprefix("W/") == etag:
            return True
    return False
