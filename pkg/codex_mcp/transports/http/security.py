"""Request checks that protect a local server: DNS rebinding (Host and Origin) and auth
(specs/http.md, "Security")."""

from __future__ import annotations

import hashlib
import hmac
import ipaddress
import re
from typing import Final, NamedTuple

from aiohttp import web
from yarl import URL

from ...launch import StartupError
from ...loopback import is_loopback_host
from ...settings import flag
from .client_address import ClientAddresses
from .config import HttpConfig
from .errors import TokenRefused, error_response, refusal
from .guessing import Attempt, GuessingLimit, locked_out
from .oauth import Grant, ResourceServer

LOOPBACK_NAMES = frozenset({"localhost", "127.0.0.1", "[::1]"})

_HOST = re.compile(r"(\[[0-9a-f:.]+\]|[a-z0-9_.-]+)(?::([0-9]{1,5}))?", re.ASCII)
_ORIGIN = re.compile(r"([a-z][a-z0-9+.-]*)://([^/?#]+)/?", re.ASCII)


class Host(NamedTuple):
    name: str  # lower case; IPv6 in brackets
    port: int | None


def parse_host(value: str) -> Host | None:
    """'Example.com:8000' -> Host('example.com', 8000); None when it is not a host."""
    match = _HOST.fullmatch(value.strip().lower())
    if match is None:
        return None
    name, port = match[1], match[2]
    if name.startswith("["):
        try:
            ipaddress.IPv6Address(name[1:-1])
        except ValueError:
            return None
    if port is not None and int(port) > 65535:
        return None
    return Host(name, int(port) if port is not None else None)


def _configured_hosts(entries: list[str], setting: str) -> list[Host] | None:
    """A host list from the config (None means '*': any host); a bad entry stops startup."""
    hosts = []
    for entry in entries:
        if entry.strip() == "*":
            return None
        host = parse_host(entry)
        if host is None:
            raise StartupError(f"{flag(setting)} {entry!r} is not a host or host:port")
        hosts.append(host)
    return hosts


def _allowed(host: Host, allowed: list[Host] | None) -> bool:
    """A listed entry without a port allows every port of its host."""
    if allowed is None:
        return True
    return any(a.name == host.name and a.port in (None, host.port) for a in allowed)


def target_authority(request: web.Request) -> str | None:
    """The authority a request target names (absolute form `http://host:port/path`, or a
    CONNECT's `host:port`); None for the usual origin form (`/path`)."""
    target = request.raw_path
    if target.startswith("/"):
        return None
    if "://" not in target:
        return target
    try:
        return URL(target, encoded=True).raw_authority
    except ValueError:
        return target  # not a URL: parse_host refuses it


#: The attribute of a connection (connections.GuardedConnection) that keeps the Host,
#: Origin and X-Forwarded-Host of its last request to pass the checks.
ADMITTED_HEADERS: Final = "admitted_headers"
#: A connection that keeps none (aiohttp's own, in an in-process test server).
_UNREMEMBERED: Final = object()

CREDENTIAL_KEY = web.RequestKey("codex_mcp_credential", object)
#: The health probes: served past the session store's gate, and on the connections let
#: in past the connection cap. Neither checks Host or Origin (orchestrators probe by
#: address); /healthz needs no credential either.
OPEN_PATH_SUFFIXES = ("/healthz", "/readyz")


def credential_of(request: web.Request) -> str | None:
    """The fingerprint of the credential the guard admitted the request with (None: no auth)."""
    value = request.get(CREDENTIAL_KEY)
    return value if isinstance(value, str) else None


class Guard:
    def __init__(self, config: HttpConfig) -> None:
        self.config = config
        self.check_hosts = bool(config.allowed_hosts) or is_loopback_host(config.host)
        loopback = [Host(name, None) for name in LOOPBACK_NAMES]
        listed = _configured_hosts(list(config.allowed_hosts), "allowed_hosts")
        self.allowed_hosts = listed if config.allowed_hosts else loopback
        self.forwarded_hosts = _configured_hosts(list(config.forwarded_hosts), "forwarded_hosts")
        self.allowed_origins = {o.strip().lower().rstrip("/") for o in config.allowed_origins}
        self._token_digests = [hashlib.sha256(t.encode()).digest() for t in config.bearer_tokens]
        #: OAuth access tokens (JWTs) beside the static tokens, when an issuer is set.
        self.oauth = ResourceServer(config) if config.oauth_issuer else None
        #: Origins whose pages may call us (cors.py): their Origin passes here too.
        self.cors_origins = {o.strip().lower().rstrip("/") for o in config.cors_origin}
        #: Who a request comes from: the TCP peer, or the client a trusted proxy names.
        self.client_address = ClientAddresses(config.trusted_proxies)
        #: Wrong credentials per client address.
        self.guessing = GuessingLimit(config.auth_failures_per_minute)

    def trusted_forward(self, request: web.Request) -> Host | None:
        """The X-Forwarded-Host of a request, when it names a host on forwarded_hosts."""
        if not self.config.forwarded_hosts:
            return None
        host = parse_host(request.headers.get("X-Forwarded-Host", "").split(",")[0])
        return host if host is not None and _allowed(host, self.forwarded_hosts) else None

    def check_host_and_origin(self, request: web.Request) -> web.Response | None:
        """The DNS-rebinding checks. A keep-alive connection (connections.py) remembers the
        Host, Origin and X-Forwarded-Host its last admitted request had: a later request
        on it with the very same values (and an origin-form target) is admitted without
        parsing them again; any other value is checked in full."""
        headers = request.headers
        seen = (
            headers.get("Host"),
            headers.get("Origin"),
            headers.get("X-Forwarded-Host") if self.config.forwarded_hosts else None,
        )
        connection = request.protocol
        remembered = getattr(connection, ADMITTED_HEADERS, _UNREMEMBERED)
        if remembered == seen and request.raw_path.startswith("/"):
            return None
        denied = self._check_host_and_origin(request)
        if denied is None and remembered is not _UNREMEMBERED:
            setattr(connection, ADMITTED_HEADERS, seen)
        return denied

    def _check_host_and_origin(self, request: web.Request) -> web.Response | None:
        forwarded = self.trusted_forward(request)
        denied = self.check_host(request, forwarded)
        if denied is not None:
            return denied
        origin = request.headers.get("Origin")
        return self._check_origin(origin, forwarded) if origin is not None else None

    def check_host(self, request: web.Request, forwarded: Host | None) -> web.Response | None:
        """The Host half of the DNS-rebinding checks (`forwarded`: the request's trusted
        X-Forwarded-Host, which stands for it). Public documents any page may read (the
        server card) pass this one alone."""
        if self.check_hosts and forwarded is None:
            denied = self._check_host(request.headers.get("Host", ""), "Host header")
            authority = target_authority(request)
            if denied is None and authority is not None:
                denied = self._check_host(authority, "request target host")
            return denied
        return None

    def _check_host(self, value: str, what: str) -> web.Response | None:
        host = parse_host(value)
        if host is None:
            return error_response(400, f"Bad Request: malformed {what} {value!r}")
        if not _allowed(host, self.allowed_hosts):
            message = (
                f"{what[0].upper()}{what[1:]} {value!r} is not allowed (set allowed_hosts, "
                "or forwarded_hosts behind a proxy)"
            )
            return refusal(error_response(403, message), "host")
        return None

    def _check_origin(self, origin: str, forwarded: Host | None) -> web.Response | None:
        normalized = origin.strip().lower().rstrip("/")
        if "*" in self.allowed_origins or normalized in self.allowed_origins:
            return None
        if normalized in self.cors_origins:  # the operator lets its pages call us
            return None
        match = _ORIGIN.fullmatch(normalized)
        host = parse_host(match[2]) if match is not None else None
        if normalized != "null" and host is None:
            return error_response(400, f"Bad Request: malformed Origin header {origin!r}")
        if host is not None and match is not None and match[1] in ("http", "https"):
            if host.name in LOOPBACK_NAMES and not self.allowed_origins:
                return None
            if forwarded is not None and host.name == forwarded.name:
                return None
        return refusal(error_response(403, f"Origin {origin!r} is not allowed"), "origin")

    def is_own_origin(self, request: web.Request) -> bool:
        """Is the request's Origin this server's own as the client reached it (the scheme's
        host and port that its Host names, or a trusted proxy's X-Forwarded-Host), or one
        listed in allowed_origins? Any other loopback origin is another site's page."""
        origin = request.headers.get("Origin", "").strip().lower().rstrip("/")
        if origin in self.allowed_origins:
            return True
        match = _ORIGIN.fullmatch(origin)
        if match is None or match[1] not in ("http", "https"):
            return False
        theirs = parse_host(match[2])
        ours = self.trusted_forward(request) or parse_host(request.headers.get("Host", ""))
        if theirs is None or ours is None:
            return False
        default = 443 if match[1] == "https" else 80
        return theirs.name == ours.name and (theirs.port or default) == (ours.port or default)

    async def credential(
        self, request: web.Request
    ) -> tuple[str | None, Grant | None, web.Response | None]:
        """(the credential's fingerprint, or None without auth; an OAuth token's grant, whose
        scopes admission.py judges; an error response or None). A static token's
        fingerprint is its SHA-256; an OAuth token's is its issuer and subject's
        (oauth.Grant.principal). A wrong token counts against the client's address
        (guessing.py); sending none is no guess."""
        if not self._token_digests and self.oauth is None:
            return None, None, None
        header = request.headers.get("Authorization", "")
        scheme, _, token = header.partition(" ")
        token = token.strip()
        if scheme.lower() != "bearer" or not token:
            if self.oauth is not None:
                denied = self.oauth.unauthorized("missing bearer token", token_given=False)
                return None, None, denied
            return None, None, _unauthorized("missing bearer token", error=None)
        guessing = self.guessing
        # A locked address is answered before its token is looked at, so that neither the
        # answer nor its time tells a right token from a wrong one.
        quiet = guessing.quiet  # then nobody is locked: who is asking matters not yet
        client = None if quiet else self.client_address(request)
        wait = 0 if quiet else guessing.wait(client)
        if wait:
            return None, None, locked_out(wait)
        if self._token_digests:
            fingerprint = self._static(token)
            if fingerprint is not None:  # compared at once: no attempt needs holding
                return fingerprint, None, None
        if quiet:
            client = self.client_address(request)
        return await self.admit_token(token, guessing.attempt(client))

    async def admit_token(
        self, token: str, attempt: Attempt
    ) -> tuple[str | None, Grant | None, web.Response | None]:
        """`credential` for a token (from the header, or the operator's login form), on an
        attempt taken before it is compared: a locked address gets 429 and no verdict."""
        if attempt.wait:
            return None, None, attempt.refused()
        with attempt:
            fingerprint = self._static(token)
            if fingerprint is not None:
                return fingerprint, None, None
            if self.oauth is None:
                attempt.failed()
                return None, None, _unauthorized("invalid bearer token", error="invalid_token")
            try:
                grant = await self.oauth.authenticate(token)
            except TokenRefused as refused:
                if refused.status == 401:  # 503: the issuer's keys, not the token
                    attempt.failed()
                return None, None, self.oauth.unauthorized(str(refused), refused.status)
            return grant.principal, grant, None

    def _static(self, token: str) -> str | None:
        """The fingerprint of a configured static token, compared in constant time."""
        # Header bytes that are not UTF-8 arrive as surrogate escapes: hash them as sent.
        digest = hashlib.sha256(token.encode("utf-8", "surrogateescape")).digest()
        matched = False
        for known in self._token_digests:
            matched |= hmac.compare_digest(digest, known)  # no early exit: constant time
        return digest.hex() if matched else None

    @property
    def static_fingerprints(self) -> list[str]:
        """The fingerprints of the configured static tokens."""
        return [digest.hex() for digest in self._token_digests]

    def is_https(self, request: web.Request) -> bool:
        """Did the client reach us over TLS: directly, or through a proxy on
        forwarded_hosts that says so (X-Forwarded-Proto)?"""
        if request.secure:
            return True
        proto = request.headers.get("X-Forwarded-Proto", "").split(",")[0].strip().lower()
        return proto == "https" and self.trusted_forward(request) is not None


def _unauthorized(message: str, error: str | None) -> web.Response:
    challenge = 'Bearer realm="codex-mcp"'
    if error:
        challenge += f', error="{error}", error_description="{message}"'
    response = error_response(401, message, headers={"WWW-Authenticate": challenge})
    return refusal(response, "wrong_credential" if error else "no_credential")
