"""An authorization server's signing keys, as a resource server needs them: discovery, JWKS
cache and refetch (specs/oauth.md, "Tokens"), bounded as outside input (specs/isolation.md,
"The issuer")."""

from __future__ import annotations

import asyncio
import json
import logging
import time
from typing import Any, Final, TypeGuard

import aiohttp
import jwt
from yarl import URL

from .errors import IssuerUnreachable, UnknownKey

log = logging.getLogger("codex_mcp.http")

#: How long a fetched key set is used before it is fetched again.
REFRESH_SECONDS: Final = 3600.0
#: The least time between two fetches caused by unknown key ids.
REFETCH_SECONDS: Final = 2.0
FETCH_TIMEOUT_SECONDS: Final = 10.0
#: The most we read of any body the issuer sends (metadata, key set): real ones are a few
#: KiB; past this the fetch fails (a larger one cost 2 GB of memory within the timeout).
MAX_ISSUER_BODY_BYTES: Final = 1024 * 1024
#: The most characters of an outside value (a key id, an algorithm, an issuer's claim)
#: put in a log line or an answer.
SHOWN_CHARS: Final = 80
#: Signature algorithms accepted: asymmetric only (never `none`, never HMAC, whose key
#: would be public in the key set).
ALGORITHMS: Final = frozenset(
    {"RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512", "EdDSA"}
)


def shown(value: object) -> str:
    """An outside value as we may log or answer it: ASCII, escaped, at most SHOWN_CHARS."""
    text = ascii(value)
    return text if len(text) <= SHOWN_CHARS else text[: SHOWN_CHARS - 3] + "..."


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
            raise UnknownKey(f"the issuer publishes no key {shown(kid)}" if kid else "no key id")
        if jwk.get("alg", algorithm) != algorithm or jwk.get("use", "sig") != "sig":
            raise UnknownKey(f"key {shown(kid)} is not for {algorithm} signatures")
        cache_key = (kid or "", algorithm)
        parsed = self._parsed.get(cache_key)
        if parsed is None:
            try:
                parsed = jwt.PyJWK(jwk, algorithm=algorithm)
            except jwt.PyJWTError as error:
                raise UnknownKey(
                    f"key {shown(kid)} cannot verify {algorithm}: {shown(str(error))}"
                ) from None
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
                raise IssuerUnreachable(f"{shown(jwks_uri)} is not a JSON Web Key Set")
        except IssuerUnreachable as error:
            self._failure, self._failed_at = str(error), time.monotonic()
            log.warning("oauth: cannot fetch the keys of %s: %s", self.issuer, error)
            raise
        usable: dict[str, dict[str, Any]] = {}
        for jwk in keys:
            if _usable(jwk):
                usable[jwk.get("kid", "")] = jwk
        if len(usable) < len(keys):
            log.warning(
                "oauth: %d of the %d keys %s publishes cannot be used; left out",
                len(keys) - len(usable),
                len(keys),
                self.issuer,
            )
        self._jwks = usable
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
                    f"{url} says its issuer is {shown(metadata.get('issuer'))}, not {self.issuer!r}"
                )
            return metadata
        raise IssuerUnreachable("; ".join(problems))

    async def _get_json(self, url: str) -> dict[str, Any]:
        """The JSON object at `url`, read up to MAX_ISSUER_BODY_BYTES."""
        assert self._session is not None
        shown_url = shown(url).strip("'")
        try:
            async with self._session.get(url, headers={"Accept": "application/json"}) as reply:
                if reply.status != 200:
                    raise IssuerUnreachable(f"{shown_url} answered {reply.status}")
                data = await _read_capped(reply, shown_url)
        except (aiohttp.ClientError, TimeoutError, ValueError) as error:
            raise IssuerUnreachable(f"{shown_url}: {error or type(error).__name__}") from None
        try:
            body = json.loads(data)
        except (ValueError, RecursionError):  # not UTF-8, not JSON, or nested too deep
            raise IssuerUnreachable(f"{shown_url} did not answer JSON") from None
        if not isinstance(body, dict):
            raise IssuerUnreachable(f"{shown_url} did not answer a JSON object")
        return body


async def _read_capped(reply: aiohttp.ClientResponse, url: str) -> bytes:
    """The whole body, or IssuerUnreachable as soon as it is past MAX_ISSUER_BODY_BYTES."""
    too_large = IssuerUnreachable(f"{url} sent more than {MAX_ISSUER_BODY_BYTES} bytes")
    if (reply.content_length or 0) > MAX_ISSUER_BODY_BYTES:
        raise too_large
    chunks: list[bytes] = []
    size = 0
    async for chunk in reply.content.iter_any():
        size += len(chunk)
        if size > MAX_ISSUER_BODY_BYTES:
            raise too_large
        chunks.append(chunk)
    return b"".join(chunks)


#: The members of a JWK that are strings wherever they appear (RFC 7517, 7518, 8037).
_STRING_MEMBERS: Final = ("kty", "kid", "alg", "use", "crv", "n", "e", "x", "y")


def _usable(jwk: object) -> TypeGuard[dict[str, Any]]:
    """A public signing key PyJWT can parse: an object whose members are of their types,
    not a shared secret (`oct`, which the key set would make public)."""
    if not isinstance(jwk, dict) or jwk.get("kty") == "oct":
        return False
    if not all(isinstance(jwk[member], str) for member in _STRING_MEMBERS if member in jwk):
        return False
    try:
        jwt.PyJWK(jwk)
    except jwt.PyJWTError:
        return False
    return True
