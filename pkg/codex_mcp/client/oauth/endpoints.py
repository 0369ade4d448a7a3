"""Talking to the endpoints of an authorization server (and of the MCP server) without
trusting them (specs/isolation.md, "The OAuth client and its token store")."""

from __future__ import annotations

import base64
from typing import Any
from urllib.parse import quote, urlsplit

import aiohttp
import orjson
from multidict import CIMultiDictProxy

from ...loopback import is_loopback_host
from .errors import OAuthError, shown

#: The most we read of any answer: metadata, a registration, a token response.
MAX_BODY_BYTES = 1 << 20
#: The longest token, client id or secret we accept (real ones are a few KiB at most).
MAX_TOKEN_CHARS = 16 * 1024
#: Seconds one request to an OAuth endpoint may take, so a stalled server cannot hold the
#: token store's lock (store.py) for ever.
REQUEST_TIMEOUT = 30.0
_TIMEOUT = aiohttp.ClientTimeout(total=REQUEST_TIMEOUT)
#: What every refusal of a URL ends with.
SECURE_RULE = "OAuth needs https (plain http only on loopback)"


def insecure_reason(url: str) -> str | None:
    """Why `url` is no place for a credential, or None when it is: an https URL, or http on
    a loopback address (127.0.0.0/8, ::1, localhost)."""
    if any(ord(c) <= 0x20 or ord(c) == 0x7F for c in url):
        return "contains spaces or control characters"
    try:
        parts = urlsplit(url)
        host = parts.hostname
    except ValueError:
        return "is not a URL"
    if parts.scheme not in ("http", "https") or not host:
        return "is not an http(s) URL"
    if parts.scheme == "http" and not is_loopback_host(host):
        return "is plain http off loopback"
    return None


def require_secure(url: str, what: str) -> str:
    reason = insecure_reason(url)
    if reason is not None:
        raise OAuthError(f"{what} {shown(url)} {reason}: {SECURE_RULE}")
    return url


def printable_token(value: Any) -> str | None:
    """`value` when it can be sent as a token, client id or secret: a non-empty string of
    visible ASCII characters (RFC 6750's b64token and RFC 6749's VSCHAR fit), not too long.
    Anything else (an object, a number, a newline that would split a header) is None."""
    if not isinstance(value, str) or not 0 < len(value) <= MAX_TOKEN_CHARS:
        return None
    return value if all(0x21 <= ord(c) <= 0x7E for c in value) else None


async def read_body(resp: aiohttp.ClientResponse, url: str) -> bytes:
    """The body, refused past MAX_BODY_BYTES (before reading it when it says its length)."""
    too_large = OAuthError(f"{url}: the answer is larger than {MAX_BODY_BYTES} bytes; not read")
    if resp.content_length is not None and resp.content_length > MAX_BODY_BYTES:
        raise too_large
    body = bytearray()
    async for chunk in resp.content.iter_any():
        body += chunk
        if len(body) > MAX_BODY_BYTES:
            raise too_large
    return bytes(body)


def basic_authorization(client_id: str, secret: str) -> dict[str, str]:
    """The Authorization header of HTTP Basic client authentication: RFC 6749 section
    2.3.1 has each part form-encoded before joining."""
    pair = f"{quote(client_id, safe='')}:{quote(secret, safe='')}"
    return {"Authorization": "Basic " + base64.b64encode(pair.encode()).decode()}


def parse_json(body: bytes) -> Any:
    """The JSON value of `body`, or None when it is none (orjson bounds the depth: a body
    nested past 1024 levels is an error, never a RecursionError)."""
    try:
        return orjson.loads(body)
    except orjson.JSONDecodeError:
        return None


async def exchange(
    http: aiohttp.ClientSession, url: str, what: str, **request: Any
) -> tuple[int, Any, CIMultiDictProxy[str]]:
    """POST a credential-carrying request to `url` (`request`: aiohttp's `data`, `json`,
    `headers`): its status, JSON body (None when not JSON) and headers. A redirect is an error, never
    followed: the form would go, secrets and all, wherever the server points."""
    require_secure(url, what)
    try:
        async with http.post(url, allow_redirects=False, timeout=_TIMEOUT, **request) as resp:
            if 300 <= resp.status < 400:
                location = resp.headers.get("Location", "(no Location)")
                raise OAuthError(
                    f"{what} {url} answered HTTP {resp.status} redirecting to {shown(location)}:"
                    " not following a redirect with credentials"
                )
            return resp.status, parse_json(await read_body(resp, url)), resp.headers
    except (aiohttp.ClientError, TimeoutError) as exc:
        raise OAuthError(f"{what} {url}: request failed: {exc or type(exc).__name__}") from exc


async def get_json(
    http: aiohttp.ClientSession, url: str, headers: dict[str, str]
) -> dict[str, Any] | None:
    """The JSON object published at `url` (metadata: no credential goes with it, so a
    redirect is followed, but it must end at an https URL), or None when there is none:
    an HTTP error, or a body that is not a JSON object."""
    require_secure(url, "metadata URL")
    try:
        async with http.get(url, headers=headers, timeout=_TIMEOUT) as resp:
            require_secure(str(resp.url), f"metadata URL {url} redirected to")
            if resp.status >= 400:
                return None
            body = parse_json(await read_body(resp, url))
    except (aiohttp.ClientError, TimeoutError):
        return None
    return body if isinstance(body, dict) else None


def error_detail(body: Any) -> str:
    """What an error answer says (RFC 6749 section 5.2), escaped and short."""
    if isinstance(body, dict):
        for key in ("error_description", "error"):
            if isinstance(body.get(key), str):
                return shown(body[key])
    return shown(body)
