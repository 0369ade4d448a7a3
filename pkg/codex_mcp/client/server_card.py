"""Fetching a server's card (SEP-2127, a draft extension; specs/http.md, "The server card").
What the card says is advisory: check it against the live connection before relying on it."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

import aiohttp
import orjson
from yarl import URL

from codex_mcp.core.server_card import (
    CARD_SUFFIX,
    MEDIA_TYPE,
    InvalidCard,
    ServerCard,
    read_card,
)

from .errors import McpClientError

#: A card is a few hundred bytes; this leaves room for icons and `_meta`, and no more.
DEFAULT_MAX_BYTES: Final = 64 * 1024
#: Media types a card is accepted as: its own, and plain JSON (static hosting serves that).
ACCEPTED_TYPES: Final = (MEDIA_TYPE, "application/json")
_REDIRECTS: Final = frozenset({301, 302, 303, 307, 308})


class ServerCardError(McpClientError):
    """The card could not be fetched, or what came back is not a card; the message says
    which and why."""


def server_card_url(endpoint: str) -> str:
    """Where the card of the server at `endpoint` (its Streamable HTTP URL) is by the
    extension's recommendation: `<endpoint>/server-card`."""
    url = URL(endpoint)
    return str(url.with_path(url.path.rstrip("/") + CARD_SUFFIX).with_query(None))


async def fetch_server_card(
    url: str,
    *,
    timeout: float = 10.0,
    max_bytes: int = DEFAULT_MAX_BYTES,
    max_redirects: int = 3,
    headers: Mapping[str, str] | None = None,
) -> ServerCard:
    """GET the card at `url` (see `server_card_url`). Redirects are followed only within
    the same origin (scheme, host and port), at most `max_redirects`; at most `max_bytes`
    are read; the answer must be a card's media type (or JSON) holding a valid card.
    Raises ServerCardError."""
    start = URL(url)
    if start.scheme not in ("http", "https") or not start.host:
        raise ServerCardError(f"{url!r} is not an http(s) URL")
    asked = {**(headers or {}), "Accept": f"{MEDIA_TYPE}, application/json;q=0.5"}
    current = start
    try:
        async with aiohttp.ClientSession(
            timeout=aiohttp.ClientTimeout(total=timeout), max_line_size=8190, max_field_size=8190
        ) as session:
            for _ in range(max_redirects + 1):
                async with session.get(current, headers=asked, allow_redirects=False) as resp:
                    if resp.status in _REDIRECTS:
                        current = _same_origin_redirect(start, current, resp)
                        continue
                    return _card_from(
                        current,
                        resp.status,
                        resp.content_type,
                        await _body(resp, current, max_bytes),
                    )
            raise ServerCardError(f"{url} redirected more than {max_redirects} times")
    except TimeoutError:
        raise ServerCardError(f"no server card from {current} within {timeout:g} s") from None
    except aiohttp.ClientError as exc:
        raise ServerCardError(
            f"fetching the server card at {current} failed: {exc or type(exc).__name__}"
        ) from exc


def _same_origin_redirect(start: URL, current: URL, resp: aiohttp.ClientResponse) -> URL:
    location = resp.headers.get("Location")
    if not location:
        raise ServerCardError(f"{current} answered HTTP {resp.status} without a Location")
    try:
        target = current.join(URL(location))
    except ValueError:
        raise ServerCardError(
            f"{current} redirected to a malformed URL {location[:200]!r}"
        ) from None
    if (target.scheme, target.host, target.port) != (start.scheme, start.host, start.port):
        raise ServerCardError(
            f"{current} redirected to another origin ({str(target)[:200]}): not followed"
        )
    return target


async def _body(resp: aiohttp.ClientResponse, url: URL, max_bytes: int) -> bytes:
    declared = resp.content_length
    if declared is not None and declared > max_bytes:
        raise ServerCardError(f"the server card at {url} is {declared} bytes; at most {max_bytes}")
    body = bytearray()
    async for chunk in resp.content.iter_chunked(16 * 1024):
        body += chunk
        if len(body) > max_bytes:
            raise ServerCardError(f"the server card at {url} is over {max_bytes} bytes")
    return bytes(body)


def _card_from(url: URL, status: int, content_type: str, body: bytes) -> ServerCard:
    if status != 200:
        raise ServerCardError(f"{url} answered HTTP {status}, not a server card")
    if content_type not in ACCEPTED_TYPES:
        raise ServerCardError(
            f"{url} answered {content_type or 'no Content-Type'}, not {MEDIA_TYPE}"
        )
    try:
        document = orjson.loads(body)
    except orjson.JSONDecodeError as exc:
        raise ServerCardError(f"the server card at {url} is not JSON: {exc}") from None
    try:
        return read_card(document)
    except InvalidCard as exc:
        raise ServerCardError(f"the document at {url} is not a valid server card: {exc}") from None
