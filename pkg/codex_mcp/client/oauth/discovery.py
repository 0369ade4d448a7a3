"""Finding who issues tokens for an MCP server (specs/oauth.md, "The client's OAuth": 401)."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import aiohttp

from .endpoints import SECURE_RULE, get_json, insecure_reason, require_secure
from .errors import BearerTokenNeeded, OAuthError, shown

log = logging.getLogger("codex_mcp.client.oauth")

PRM_WELL_KNOWN = "/.well-known/oauth-protected-resource"
AS_WELL_KNOWN = "/.well-known/oauth-authorization-server"
OIDC_WELL_KNOWN = "/.well-known/openid-configuration"
#: The MCP protocol version header the metadata requests carry (the spec asks for it).
_HEADERS = {"Accept": "application/json", "MCP-Protocol-Version": "2025-11-25"}


@dataclass(frozen=True, slots=True)
class ProtectedResource:
    resource: str
    authorization_servers: tuple[str, ...]
    scopes_supported: tuple[str, ...] | None


@dataclass(frozen=True, slots=True)
class AuthServer:
    issuer: str
    authorization_endpoint: str
    token_endpoint: str
    registration_endpoint: str | None
    scopes_supported: tuple[str, ...] | None = None
    token_auth_methods: tuple[str, ...] | None = None
    client_id_metadata_documents: bool = False
    iss_parameter_supported: bool = False
    dpop_algorithms: tuple[str, ...] | None = None
    #: RFC 7009: where `logout` hands the refresh token back (None: nowhere published).
    revocation_endpoint: str | None = None
    #: False for the 2025-03-26 fallback endpoints: no metadata, no issuer to check.
    from_metadata: bool = True


def origin(url: str) -> str:
    parts = urlsplit(url)
    return urlunsplit((parts.scheme, parts.netloc, "", "", ""))


def canonical_resource(url: str) -> str:
    """The server's URL as an RFC 8707 resource: no fragment, no query."""
    parts = urlsplit(url)
    return urlunsplit((parts.scheme.lower(), parts.netloc.lower(), parts.path, "", ""))


def names_this_server(resource: str, server_url: str) -> bool:
    """Whether metadata's `resource` covers `server_url` (same origin, path prefix)."""
    want, have = urlsplit(server_url), urlsplit(resource)
    if (want.scheme.lower(), want.netloc.lower()) != (have.scheme.lower(), have.netloc.lower()):
        return False
    prefix = have.path.rstrip("/") + "/"
    return (want.path.rstrip("/") + "/").startswith(prefix)


async def _get_json(http: aiohttp.ClientSession, url: str) -> dict[str, Any] | None:
    """The JSON object at `url`, or None when there is none (4xx, or not JSON)."""
    return await get_json(http, url, _HEADERS)


def _strings(value: Any) -> tuple[str, ...] | None:
    if not isinstance(value, list):
        return None
    return tuple(v for v in value if isinstance(v, str))


async def protected_resource(
    http: aiohttp.ClientSession, server_url: str, metadata_url: str | None
) -> ProtectedResource | None:
    """The server's resource metadata, or None when it publishes none (2025-03-26)."""
    parts = urlsplit(server_url)
    if metadata_url:
        require_secure(metadata_url, "the resource_metadata URL")
    candidates = [metadata_url] if metadata_url else []
    path = parts.path.rstrip("/")
    if path:
        candidates.append(origin(server_url) + PRM_WELL_KNOWN + path)
    candidates.append(origin(server_url) + PRM_WELL_KNOWN)
    for url in candidates:
        body = await _get_json(http, url)
        if body is None:
            continue
        resource = body.get("resource")
        servers = _strings(body.get("authorization_servers")) or ()
        if not isinstance(resource, str) or not servers:
            raise OAuthError(f"{url}: protected-resource metadata without resource or servers")
        if not names_this_server(resource, server_url):
            raise OAuthError(
                f"{url}: the metadata is for {shown(resource)}, not {server_url!r}; not authorizing"
            )
        return ProtectedResource(resource, servers, _strings(body.get("scopes_supported")))
    return None


def _metadata_urls(issuer: str) -> list[str]:
    """RFC 8414's path-aware location first, then OpenID Connect's two."""
    base, path = origin(issuer), urlsplit(issuer).path.rstrip("/")
    if not path:
        return [base + AS_WELL_KNOWN, base + OIDC_WELL_KNOWN]
    return [base + AS_WELL_KNOWN + path, base + OIDC_WELL_KNOWN + path, issuer + OIDC_WELL_KNOWN]


async def auth_server(http: aiohttp.ClientSession, issuer: str) -> AuthServer | None:
    """The metadata of `issuer`, or None when it publishes none at any location."""
    require_secure(issuer, "the issuer")
    for url in _metadata_urls(issuer):
        body = await _get_json(http, url)
        if body is None:
            continue
        if body.get("issuer") != issuer:  # exact: no normalization (RFC 8414 section 3.3)
            raise OAuthError(
                f"{url}: metadata names issuer {shown(body.get('issuer'))}, not {issuer!r}; "
                "not using it"
            )
        authorize, token = body.get("authorization_endpoint"), body.get("token_endpoint")
        if not isinstance(token, str):
            raise OAuthError(f"{url}: authorization-server metadata without a token_endpoint")
        registration = body.get("registration_endpoint")
        revocation = body.get("revocation_endpoint")
        endpoints = {
            "authorization_endpoint": authorize,
            "token_endpoint": token,
            "registration_endpoint": registration,
            "revocation_endpoint": revocation,
        }
        for name, value in endpoints.items():
            reason = insecure_reason(value) if isinstance(value, str) else None
            if reason is not None:
                raise OAuthError(f"{url}: {name} {shown(value)} {reason}: {SECURE_RULE}")
        return AuthServer(
            issuer=issuer,
            authorization_endpoint=authorize if isinstance(authorize, str) else "",
            token_endpoint=token,
            registration_endpoint=registration if isinstance(registration, str) else None,
            scopes_supported=_strings(body.get("scopes_supported")),
            token_auth_methods=_strings(body.get("token_endpoint_auth_methods_supported")),
            client_id_metadata_documents=body.get("client_id_metadata_document_supported") is True,
            iss_parameter_supported=body.get("authorization_response_iss_parameter_supported")
            is True,
            dpop_algorithms=_strings(body.get("dpop_signing_alg_values_supported")),
            revocation_endpoint=revocation if isinstance(revocation, str) else None,
        )
    return None


def fallback_server(server_url: str) -> AuthServer:
    """2025-03-26: the server's origin, at the default endpoints."""
    base = origin(server_url)
    return AuthServer(
        issuer=base,
        authorization_endpoint=base + "/authorize",
        token_endpoint=base + "/token",
        registration_endpoint=base + "/register",
        from_metadata=False,
    )


@dataclass(frozen=True, slots=True)
class Discovered:
    """Where to authorize for one server: its resource metadata (if any) and issuer."""

    resource: str
    server: AuthServer
    scopes_supported: tuple[str, ...] | None
    #: False when the server published none (2025-03-26, or no OAuth at all).
    has_resource_metadata: bool = True


async def discover(
    http: aiohttp.ClientSession,
    server_url: str,
    metadata_url: str | None,
    *,
    fallback: bool = True,
) -> Discovered:
    """Where to authorize; without resource metadata, the 2025-03-26 fallback, or (with
    `fallback=False`) an error: the 401 was not an OAuth one we know how to answer."""
    require_secure(server_url, "the MCP server")
    prm = await protected_resource(http, server_url, metadata_url)
    if prm is None and not fallback:  # a 401 that no OAuth answers: a static token is wanted
        raise BearerTokenNeeded(server_url)
    if prm is None:
        issuer = origin(server_url)
        server = await auth_server(http, issuer) or fallback_server(server_url)
        return Discovered(canonical_resource(server_url), server, None, False)
    issuer = prm.authorization_servers[0]
    found = await auth_server(http, issuer)
    if found is None:
        raise OAuthError(f"{issuer}: no authorization-server metadata found")
    return Discovered(prm.resource, found, prm.scopes_supported)
