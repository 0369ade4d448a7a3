"""An authorization server's signing keys, as a resource server needs them.

The issuer's metadata is found the RFC 8414 way (`/.well-known/oauth-authorization-server`,
inserted before the issuer's path), then the OpenID Connect way (`<issuer>/.well-known/
openid-configuration`); its `issuer` must be exactly the configured one. Its `jwks_uri` is
fetched and kept for `REFRESH_SECONDS`; a token signed with a key id not in the set makes
one fetch more (the issuer rotated its keys), at most every `REFETCH_SECONDS` so a stream of
forged key ids cannot make us hammer the issuer. Concurrent requests share one fetch.
The keys are parsed and used by PyJWT (`PyJWK`): no cryptography of our own.
"""

from __future__ import annotations

import asyncio
import logging
import time
from typing import Any, Final

import aiohttp
import jwt
from yarl import URL

log = logging.getLogger("codex_mcp.http")

#: How long a fetched key set is used before it is fetched again.
REFRESH_SECONDS: Final = 3600.0
#: The least time between two fetches caused by unknown key ids.
REFETCH_SECONDS: Final = 2.0
FETCH_TIMEOUT_SECONDS: Final = 10.0
#: Signature algorithms accepted: asymmetric only (never `none`, never HMAC, whose key
#: would be public in the key set).
ALGORITHMS: Final = frozenset(
    {"RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512", "EdDSA"}
)


class IssuerUnreachable(Exception):
    """The issuer's metadata or keys could not be fetched: no token can be checked now."""


class UnknownKey(Exception):
    """The token names a key the issuer does not publish."""


def metadata_urls(issuer: str) -> list[str]:
    """Where an issuer's metadata may be: RFC 8414 first, then OpenID Connect."""
    url = URL(issuer)
    path = url.path.rstrip("/")
    return [
        str(url.with_path(f"/.well-known/oauth-authorization-server{path}")),
        issuer.rstrip("/") + "/.well-known/openid-configuration",
    ]


class IssuerKeys:
    def __init__(self, issuer: str) -> None:
        self.issuer = issuer
        self._jwks: dict[str, dict[str, Any]] = {}  # kid ('' when absent) -> JWK
        self._parsed: dict[tuple[str, str], jwt.PyJWK] = {}
        self._fetched_at: float | None = None
        self._failed_at: float | None = None
        self._failure = ""
        self._fetching: asyncio.Task[None] | None = None
        self._session: aiohttp.ClientSession | None = None

    async def close(self) -> None:
        if self._session is not None:
            await self._session.close()

    async def key(self, kid: str | None, algorithm: str) -> jwt.PyJWK:
        """The key `kid` for `algorithm`. Raises UnknownKey, IssuerUnreachable."""
        age = None if self._fetched_at is None else time.monotonic() - self._fetched_at
        if age is None or age > REFRESH_SECONDS:
            await self._refresh()
        elif self._find(kid) is None and age >= REFETCH_SECONDS:
            await self._refresh()  # rotated since we fetched
        jwk = self._find(kid)
        if jwk is None:
            raise UnknownKey(f"the issuer publishes no key {kid!r}" if kid else "no key id")
        if jwk.get("alg", algorithm) != algorithm or jwk.get("use", "sig") != "sig":
            raise UnknownKey(f"key {kid!r} is not for {algorithm} signatures")
        cache_key = (kid or "", algorithm)
        parsed = self._parsed.get(cache_key)
        if parsed is None:
            try:
                parsed = jwt.PyJWK(jwk, algorithm=algorithm)
            except jwt.PyJWKError as error:
                raise UnknownKey(f"key {kid!r} cannot verify {algorithm}: {error}") from None
            self._parsed[cache_key] = parsed
        return parsed

    def _find(self, kid: str | None) -> dict[str, Any] | None:
        if kid is not None:
            return self._jwks.get(kid)
        # No key id: only an issuer with one key leaves no doubt which.
        return next(iter(self._jwks.values())) if len(self._jwks) == 1 else None

    async def _refresh(self) -> None:
        if self._failed_at is not None and time.monotonic() - self._failed_at < REFETCH_SECONDS:
            if not self._jwks:
                raise IssuerUnreachable(self._failure)
            return  # keep to the keys we have until the issuer answers again
        if self._fetching is None or self._fetching.done():
            self._fetching = asyncio.ensure_future(self._fetch())
        try:
            await asyncio.shield(self._fetching)
        except IssuerUnreachable:
            if not self._jwks:
                raise
            log.warning("oauth: using the keys of %s fetched before", self.issuer)

    async def _fetch(self) -> None:
        if self._session is None:
            timeout = aiohttp.ClientTimeout(total=FETCH_TIMEOUT_SECONDS)
            self._session = aiohttp.ClientSession(timeout=timeout)
        try:
            metadata = await self._metadata()
            jwks_uri = metadata.get("jwks_uri")
            if not isinstance(jwks_uri, str):
                raise IssuerUnreachable(f"the metadata of {self.issuer} names no jwks_uri")
            keys = (await self._get_json(jwks_uri)).get("keys")
            if not isinstance(keys, list):
                raise IssuerUnreachable(f"{jwks_uri} is not a JSON Web Key Set")
        except IssuerUnreachable as error:
            self._failure, self._failed_at = str(error), time.monotonic()
            log.warning("oauth: cannot fetch the keys of %s: %s", self.issuer, error)
            raise
        self._jwks = {
            str(jwk.get("kid", "")): jwk
            for jwk in keys
            if isinstance(jwk, dict) and jwk.get("kty") != "oct"
        }
        self._parsed.clear()
        self._fetched_at, self._failed_at = time.monotonic(), None

    async def _metadata(self) -> dict[str, Any]:
        problems = []
        for url in metadata_urls(self.issuer):
            try:
                metadata = await self._get_json(url)
            except IssuerUnreachable as error:
                problems.append(str(error))
                continue
            if metadata.get("issuer") != self.issuer:
                raise IssuerUnreachable(
                    f"{url} says its issuer is {metadata.get('issuer')!r}, not {self.issuer!r}"
                )
            return metadata
        raise IssuerUnreachable("; ".join(problems))

    async def _get_json(self, url: str) -> dict[str, Any]:
        assert self._session is not None
        try:
            async with self._session.get(url, headers={"Accept": "application/json"}) as reply:
                if reply.status != 200:
                    raise IssuerUnreachable(f"{url} answered {reply.status}")
                body = await reply.json(content_type=None)
        except (aiohttp.ClientError, TimeoutError, ValueError) as error:
            raise IssuerUnreachable(f"{url}: {error or type(error).__name__}") from None
        if not isinstance(body, dict):
            raise IssuerUnreachable(f"{url} did not answer a JSON object")
        return body
