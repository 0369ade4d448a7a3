"""Where HTTP's failures become the client's errors, for both HTTP transports: aiohttp's
exceptions (`map_exceptions`, httpcore's shape) and the statuses a server answers with
(`http_error`, `redirect_refused`). Retry policy: `client/errors.py`."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

import aiohttp

from codex_mcp.core import jsonrpc
from codex_mcp.core.errors import McpError

from ..errors import TransportError
from ..oauth.challenge import parse_challenge
from ..oauth.errors import in_their_words, shown

_RETRYABLE_STATUS = frozenset({408, 425, 429, 500, 502, 503, 504})
#: The most of a refusal's body we read: its first words are what we show.
ERROR_BODY_BYTES = 64 * 1024
#: Statuses by which a server (or a proxy) says it did not take the request.
_NOT_TAKEN_STATUS = frozenset({408, 425, 429, 503})


@contextlib.contextmanager
def map_exceptions(what: str) -> Iterator[None]:
    """aiohttp's failures in the block as a TransportError saying `what` failed. Refused
    before anything was sent: nothing ran. Anything later (a reset, a cut stream): the
    server may have taken the request."""
    try:
        yield
    except aiohttp.ClientError as exc:
        raise TransportError(
            f"{what} failed: {exc or type(exc).__name__}",
            fate_unknown=not isinstance(exc, aiohttp.ClientConnectorError),
        ) from exc


async def error_body(resp: aiohttp.ClientResponse) -> bytes:
    """The start of an error answer's body (at most ERROR_BODY_BYTES: a server's refusal
    is outside input, and never read whole)."""
    chunks: list[bytes] = []
    size = 0
    while size < ERROR_BODY_BYTES and (chunk := await resp.content.read(ERROR_BODY_BYTES - size)):
        chunks.append(chunk)
        size += len(chunk)
    return b"".join(chunks)


async def http_error(
    url: str, resp: aiohttp.ClientResponse, body: bytes | None = None
) -> TransportError:
    """The error for an answer of status 400 or more: the status, what its body says (read
    here unless given) and what its `WWW-Authenticate` says (`error_description`), escaped
    and short."""
    if body is None:
        body = await error_body(resp)
    detail = body.decode("utf-8", errors="replace").strip()
    with contextlib.suppress(McpError):
        decoded = jsonrpc.decode(body)
        error = decoded.get("error") if isinstance(decoded, dict) else None
        if isinstance(error, dict):
            detail = f"{error.get('message')} (code {error.get('code')})"
    said = parse_challenge(resp.headers.get("WWW-Authenticate")).said
    status = resp.status
    return TransportError(
        f"{url} answered HTTP {status} {resp.reason or ''}".rstrip()
        + (f": {shown(detail, 300)}" if detail else "")
        + (in_their_words(said) if said and said != detail else ""),
        retryable=status in _RETRYABLE_STATUS,
        fate_unknown=status >= 500 and status not in _NOT_TAKEN_STATUS,
    )


def redirect_refused(url: str, resp: aiohttp.ClientResponse) -> TransportError:
    location = resp.headers.get("Location", "(no Location)")
    return TransportError(
        f"{url} answered HTTP {resp.status} redirecting to {location[:300]!r}: "
        "not following a redirect with the Authorization header",
        retryable=False,
    )
