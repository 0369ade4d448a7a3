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

_RETRYABLE_STATUS = frozenset({408, 425, 429, 500, 502, 503, 504})
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


def http_error(url: str, status: int, reason: str | None, body: bytes) -> TransportError:
    detail = body.decode("utf-8", errors="replace").strip()
    with contextlib.suppress(McpError):
        decoded = jsonrpc.decode(body)
        error = decoded.get("error") if isinstance(decoded, dict) else None
        if isinstance(error, dict):
            detail = f"{error.get('message')} (code {error.get('code')})"
    return TransportError(
        f"{url} answered HTTP {status} {reason or ''}".rstrip()
        + (f": {detail[:300]}" if detail else ""),
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
