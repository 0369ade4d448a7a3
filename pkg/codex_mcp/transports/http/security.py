"""Request checks that protect a local server: DNS rebinding (Host and Origin) and auth.

Defaults are safe on loopback: only loopback Host names and Origins pass. Behind a
reverse proxy that rewrites Host, list the public host in `forwarded_hosts`: a
request whose X-Forwarded-Host is on that list passes (instead of the 421 the
official SDK answers there).
"""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Sequence
from urllib.parse import urlsplit

from aiohttp import web
from aiohttp.typedefs import Handler

from .config import HttpConfig

LOOPBACK_NAMES = frozenset({"localhost", "127.0.0.1", "[::1]", "::1"})


def _host_name(host: str) -> str:
    """'example.com:8000' -> 'example.com'; '[::1]:8000' -> '[::1]'."""
    host = host.strip().lower()
    if host.startswith("["):
        return host[: host.index("]") + 1] if "]" in host else host
    return host.rsplit(":", 1)[0] if host.count(":") == 1 else host


def _matches(value: str, allowed: Sequence[str]) -> bool:
    value = value.strip().lower()
    for entry in allowed:
        entry = entry.strip().lower()
        if entry == "*" or entry == value or entry == _host_name(value):
            return True
    return False


def _is_loopback_bind(host: str) -> bool:
    return host in LOOPBACK_NAMES or host.startswith("127.")


CREDENTIAL_KEY = web.RequestKey("codex_mcp_credential", object)
#: Routes anyone on the network may call (probes from orchestrators don't authenticate).
OPEN_PATH_SUFFIXES = ("/healthz", "/readyz")


def credential_of(request: web.Request) -> str | None:
    """The fingerprint of the credential the guard admitted the request with (None: no auth)."""
    value = request.get(CREDENTIAL_KEY)
    return value if isinstance(value, str) else None


class Guard:
    def __init__(self, config: HttpConfig) -> None:
        self.config = config
        self.check_hosts = bool(config.allowed_hosts) or _is_loopback_bind(config.host)
        self._token_digests = [hashlib.sha256(t.encode()).digest() for t in config.bearer_tokens]

    @web.middleware
    async def middleware(self, request: web.Request, handler: Handler) -> web.StreamResponse:
        """Every MCP route passes the Host/Origin checks and authentication first."""
        if request.path.endswith(OPEN_PATH_SUFFIXES):
            return await handler(request)
        denied = self.check_host_and_origin(request)
        if denied is not None:
            return denied
        credential, denied = self.credential(request)
        if denied is not None:
            return denied
        request[CREDENTIAL_KEY] = credential
        return await handler(request)

    def check_host_and_origin(self, request: web.Request) -> web.Response | None:
        forwarded = request.headers.get("X-Forwarded-Host", "").split(",")[0].strip()
        trusted_forward = bool(forwarded) and _matches(forwarded, self.config.forwarded_hosts)
        if self.check_hosts and not trusted_forward:
            host = request.headers.get("Host", "")
            allowed = self.config.allowed_hosts or list(LOOPBACK_NAMES)
            if not _matches(host, allowed):
                return _forbidden(
                    f"Host {host!r} is not allowed (set allowed_hosts, or forwarded_hosts behind a proxy)"
                )
        origin = request.headers.get("Origin")
        if origin is not None and not self._origin_allowed(
            origin, forwarded if trusted_forward else None
        ):
            return _forbidden(f"Origin {origin!r} is not allowed")
        return None

    def _origin_allowed(self, origin: str, forwarded_host: str | None) -> bool:
        allowed = [o.lower().rstrip("/") for o in self.config.allowed_origins]
        if "*" in allowed or origin.lower().rstrip("/") in allowed:
            return True
        parts = urlsplit(origin)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            return False
        hostname = parts.hostname.lower()
        if hostname in LOOPBACK_NAMES or f"[{hostname}]" in LOOPBACK_NAMES:
            return not self.config.allowed_origins
        return forwarded_host is not None and _host_name(forwarded_host) == hostname

    def credential(self, request: web.Request) -> tuple[str | None, web.Response | None]:
        """(the credential's fingerprint, or None without auth; an error response or None)."""
        if not self._token_digests:
            return None, None
        header = request.headers.get("Authorization", "")
        scheme, _, token = header.partition(" ")
        if scheme.lower() != "bearer" or not token.strip():
            return None, _unauthorized("missing bearer token", error=None)
        digest = hashlib.sha256(token.strip().encode()).digest()
        matched = False
        for known in self._token_digests:
            matched |= hmac.compare_digest(digest, known)  # no early exit: constant time
        if not matched:
            return None, _unauthorized("invalid bearer token", error="invalid_token")
        return digest.hex(), None


def _forbidden(message: str) -> web.Response:
    return web.json_response(_error_body(message), status=403)


def _unauthorized(message: str, error: str | None) -> web.Response:
    challenge = 'Bearer realm="codex-mcp"'
    if error:
        challenge += f', error="{error}", error_description="{message}"'
    return web.json_response(
        _error_body(message), status=401, headers={"WWW-Authenticate": challenge}
    )


def _error_body(message: str, code: int = -32600) -> dict[str, object]:
    return {"jsonrpc": "2.0", "id": None, "error": {"code": code, "message": message}}
