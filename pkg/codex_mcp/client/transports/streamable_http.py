"""Streamable HTTP transport, MCP 2025-03-26 and later (specs/client.md, "Transports")."""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import logging
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import aiohttp

from codex_mcp.core import jsonrpc
from codex_mcp.core.errors import McpError
from codex_mcp.core.jsonrpc import JsonObject
from codex_mcp.core.routing_headers import (
    NAME_SOURCES,
    ParamHeader,
    encode_header_value,
    param_headers,
    value_at,
)

from ..errors import ConnectionClosed, SessionExpired, TransportError
from ..oauth.challenge import Challenge, parse_challenge, with_body
from ..oauth.errors import OAuthError, in_their_words
from .base import OnClosed, OnMessage, Transport
from .http_errors import error_body, http_error, map_exceptions, redirect_refused
from .sse import iter_sse

if TYPE_CHECKING:
    from ..oauth.flow import OAuth

log = logging.getLogger("codex_mcp.client.http")

SESSION_HEADER = "Mcp-Session-Id"
VERSION_HEADER = "MCP-Protocol-Version"
#: Re-authorizations for more scope (403 insufficient_scope) one request may cause.
_MAX_STEP_UPS = 2
#: Resumes of a response stream in a row that bring nothing new before we give up.
_MAX_RESUMES = 3


@dataclasses.dataclass(slots=True)
class _StreamPosition:
    """Where a response stream got to: its last event id and the reconnect delay asked."""

    last_id: str | None = None
    retry: float = 1.0
    fresh: bool = False


class StreamableHttpTransport(Transport):
    def __init__(
        self,
        url: str,
        *,
        headers: Mapping[str, str] | None = None,
        http: aiohttp.ClientSession | None = None,
        get_stream: bool = True,
        connect_timeout: float = 10.0,
        auth: OAuth | None = None,
    ) -> None:
        """`auth`: OAuth for a server that asks for it (a 401 starts the flow; without
        it, a 401 is an HTTP error like any other)."""
        self.url = url
        self.auth = auth
        if auth is not None:
            auth.bind(url)
        self._authorization: str | None = None
        self.headers = dict(headers or {})
        self.get_stream = get_stream
        self.connect_timeout = connect_timeout
        self._http = http
        self._own_http = http is None
        self._session_id: str | None = None
        self._protocol_version: str | None = None
        self._on_message: OnMessage | None = None
        self._on_closed: OnClosed | None = None
        self._listener: asyncio.Task[None] | None = None
        self._closed = False
        self._stateless: str | None = None
        #: The x-mcp-header arguments of each tool (learned from tools/list).
        self.tool_headers: dict[str, tuple[ParamHeader, ...]] = {}

    def describe(self) -> str:
        return self.url

    @property
    def session_id(self) -> str | None:
        return self._session_id

    async def start(self, on_message: OnMessage, on_closed: OnClosed) -> None:
        self._on_message, self._on_closed = on_message, on_closed
        if self._http is None:
            timeout = aiohttp.ClientTimeout(total=None, sock_connect=self.connect_timeout)
            self._http = aiohttp.ClientSession(timeout=timeout)

    def initialized(self, protocol_version: str) -> None:
        self._protocol_version = protocol_version
        if self.get_stream and self._listener is None and not self._closed:
            self._listener = asyncio.get_running_loop().create_task(self._listen())

    def use_stateless(self, version: str | None) -> None:
        self._stateless = version
        if version is not None and self._listener is not None:
            self._listener.cancel()
            self._listener = None

    @property
    def cancels_by_notification(self) -> bool:
        return self._stateless is None

    def learn_tools(self, tools: list[JsonObject]) -> list[JsonObject]:
        """Remember each tool's `x-mcp-header` arguments; drop (with a warning) a tool
        whose annotations break the rules, as the spec asks of HTTP clients."""
        kept = []
        for tool in tools:
            name = tool.get("name")
            try:
                headers = param_headers(tool.get("inputSchema"))
            except ValueError as exc:
                log.warning("%s: tool %r dropped: %s", self.url, name, exc)
                continue
            if isinstance(name, str):
                self.tool_headers[name] = headers
            kept.append(tool)
        return kept

    def _stateless_headers(self, message: JsonObject, version: str) -> dict[str, str]:
        headers = self._authorized("application/json, text/event-stream", "POST")
        headers[VERSION_HEADER] = version
        method = message.get("method")
        if not isinstance(method, str):
            return headers
        headers["Mcp-Method"] = method
        params = message.get("params")
        params = params if isinstance(params, dict) else {}
        source = NAME_SOURCES.get(method)
        if source is not None and params.get(source) is not None:
            headers["Mcp-Name"] = encode_header_value(str(params[source]))
        if method == "tools/call":
            arguments = params.get("arguments")
            for param in self.tool_headers.get(str(params.get("name")), ()):
                value = value_at(arguments, param.path)
                if value is not None:
                    headers[f"Mcp-Param-{param.name}"] = _header_text(value)
        return headers

    def reset_session(self) -> None:
        self._session_id = None
        self._protocol_version = None
        if self._listener is not None:
            self._listener.cancel()
            self._listener = None

    def _authorized(self, accept: str, method: str) -> dict[str, str]:
        headers = {**self.headers, "Accept": accept}
        if self._authorization is not None:
            headers["Authorization"] = self._authorization
            if self.auth is not None:
                headers.update(self.auth.proof_headers(method, self.url))
        return headers

    def _headers(self, accept: str, method: str = "POST") -> dict[str, str]:
        headers = self._authorized(accept, method)
        if self._session_id is not None:
            headers[SESSION_HEADER] = self._session_id
        if self._protocol_version is not None:
            headers[VERSION_HEADER] = self._protocol_version
        return headers

    def _client(self) -> aiohttp.ClientSession:
        if self._closed or self._http is None:
            raise ConnectionClosed(f"HTTP transport to {self.url} is closed")
        return self._http

    # -- POST ------------------------------------------------------------------
    async def send(self, message: JsonObject) -> None:
        http = self._client()
        challenged, step_ups = False, 0
        nonces = 0
        while True:
            sent = await self._authorize(http)
            refused = await self._post(http, message)
            if refused is None:
                return
            assert self.auth is not None  # only an authorizing transport is refused here
            status, challenge, nonce = refused
            if (
                challenge.error == "use_dpop_nonce"
                and nonces < 2
                and self.auth.use_nonce(self.url, nonce)
            ):
                nonces += 1  # the same request with the nonce the server asked for
            elif status == 401 and not challenged:
                challenged = True
                await self.auth.unauthorized(http, challenge, sent)
            elif status == 403 and step_ups < _MAX_STEP_UPS:
                step_ups += 1
                await self.auth.step_up(http, challenge, sent)
            else:
                what = "the new token" if status == 401 else "the token, for lack of scope"
                said = in_their_words(challenge.said)
                raise OAuthError(f"{self.url} refused {what} (HTTP {status}){said}")

    async def _authorize(self, http: aiohttp.ClientSession) -> str | None:
        """Set the Authorization header the next request carries; returns it."""
        if self.auth is not None:
            self._authorization = await self.auth.header(http)
        return self._authorization

    async def _post(
        self, http: aiohttp.ClientSession, message: JsonObject
    ) -> tuple[int, Challenge, str | None] | None:
        """POST one message and deliver its answer; with `auth`, a 401, or a 403 for
        lack of scope, is returned (with its challenge) instead."""
        stateless = self._stateless
        if stateless is not None:
            headers = self._stateless_headers(message, stateless)
        else:
            headers = self._headers("application/json, text/event-stream")
        headers["Content-Type"] = "application/json"
        sent_session = self._session_id if stateless is None else None
        is_request = "method" in message and "id" in message
        credentialed = _carries_credentials(headers)
        with map_exceptions(f"HTTP request to {self.url}"):
            async with http.post(
                self.url,
                data=jsonrpc.encode(message),
                headers=headers,
                allow_redirects=not credentialed,
            ) as resp:
                if credentialed and 300 <= resp.status < 400:
                    raise redirect_refused(self.url, resp)
                if self.auth is not None and resp.status in (401, 403):
                    challenge = parse_challenge(resp.headers.get("WWW-Authenticate"))
                    if resp.status == 401 or challenge.insufficient_scope:
                        challenge = with_body(challenge, await error_body(resp))
                        return resp.status, challenge, resp.headers.get("DPoP-Nonce")
                if stateless is not None and resp.status >= 400 and is_request:
                    body = await error_body(resp)
                    if self._delivered_error(body, message.get("id")):
                        return None  # a stateless error answer (400, 404) to our request
                    raise await http_error(self.url, resp, body)
                if resp.status == 404 and sent_session is not None:
                    raise SessionExpired()
                if message.get("method") == "initialize" and SESSION_HEADER in resp.headers:
                    self._session_id = resp.headers[SESSION_HEADER]
                if resp.status == 202 or (resp.status < 300 and not is_request):
                    return None
                if resp.status >= 400:
                    raise await http_error(self.url, resp)
                answered = await self._read_answer(resp, message.get("id"))
        if is_request and not answered:
            raise TransportError(
                f"{self.url}: the response stream ended before the response", fate_unknown=True
            )
        return None

    async def _read_answer(self, resp: aiohttp.ClientResponse, request_id: Any) -> bool:
        """Deliver what the body carries; True once the response to `request_id` was seen."""
        content_type = resp.headers.get("Content-Type", "").split(";")[0].strip().lower()
        if content_type == "text/event-stream":
            position = _StreamPosition()
            if await self._read_events(resp, request_id, position):
                return True
            return await self._resume(request_id, position)
        body = await resp.read()
        if not body.strip():
            return False
        return self._deliver(body, request_id)

    async def _read_events(
        self, resp: aiohttp.ClientResponse, request_id: Any, position: _StreamPosition
    ) -> bool:
        async for event in iter_sse(resp.content):
            if event.id is not None:
                position.last_id, position.fresh = event.id, True
            if event.retry is not None:
                position.retry = event.retry / 1000
            if (
                event.event == "message"
                and event.data
                and self._deliver(event.data.encode(), request_id)
            ):
                return True  # the server may keep it open; the request is done
        return False

    async def _resume(self, request_id: Any, position: _StreamPosition) -> bool:
        """A server may end a request's stream before the answer (SEP-1699: to free a
        connection) once it has given an event id: the rest is fetched with a GET carrying
        `Last-Event-ID`, after the `retry` delay it asked for. A 2026-07-28 exchange has no
        GET, and a stream with no id cannot be resumed."""
        misses = 0
        while position.last_id is not None and self._stateless is None and misses < _MAX_RESUMES:
            await asyncio.sleep(position.retry)
            headers = self._headers("text/event-stream", "GET")
            headers["Last-Event-ID"] = position.last_id
            position.fresh = False
            credentialed = _carries_credentials(headers)
            async with self._client().get(
                self.url, headers=headers, allow_redirects=not credentialed
            ) as resp:
                if credentialed and 300 <= resp.status < 400:
                    raise redirect_refused(self.url, resp)
                if resp.status >= 400:
                    log.debug("%s: resuming a response stream: HTTP %d", self.url, resp.status)
                    return False
                if await self._read_events(resp, request_id, position):
                    return True
            misses = 0 if position.fresh else misses + 1
        return False

    def _delivered_error(self, body: bytes, request_id: Any) -> bool:
        """Deliver an HTTP error's body when it is the JSON-RPC error answering our request."""
        with contextlib.suppress(McpError):
            decoded = jsonrpc.decode(body)
            if isinstance(decoded, dict) and "error" in decoded and decoded.get("id") == request_id:
                if self._on_message is not None:
                    self._on_message(decoded, request_id)
                return True
        return False

    def _deliver(self, data: bytes, request_id: Any) -> bool:
        try:
            message = jsonrpc.decode(data)
        except McpError as exc:
            raise TransportError(f"{self.url} sent malformed JSON: {exc.message}") from None
        if self._on_message is not None:
            self._on_message(message, request_id)
        items = message if isinstance(message, list) else [message]
        return any(
            isinstance(m, dict) and "method" not in m and m.get("id") == request_id for m in items
        )

    # -- GET stream ------------------------------------------------------------
    async def _listen(self) -> None:
        """Read the server's unprompted messages; reconnect (resuming) when the stream drops."""
        last_event_id: str | None = None
        delay, failures = 1.0, 0
        while not self._closed and failures < 3:
            headers = self._headers("text/event-stream", "GET")
            if last_event_id is not None:
                headers["Last-Event-ID"] = last_event_id
            credentialed = _carries_credentials(headers)
            try:
                async with self._client().get(
                    self.url, headers=headers, allow_redirects=not credentialed
                ) as resp:
                    if resp.status >= 400 or (credentialed and resp.status >= 300):
                        # 405: no stream offered. Anything else: not worth hammering (a
                        # redirect: not followed with our credentials).
                        log.debug("GET stream of %s: HTTP %d", self.url, resp.status)
                        return
                    failures = 0
                    async for event in iter_sse(resp.content):
                        if event.id is not None:
                            last_event_id = event.id
                        if event.retry is not None:
                            delay = event.retry / 1000
                        if event.event == "message" and event.data:
                            with contextlib.suppress(TransportError):
                                self._deliver(event.data.encode(), None)
            except (aiohttp.ClientError, ConnectionClosed) as exc:
                failures += 1
                log.debug("GET stream of %s dropped: %s", self.url, exc)
            await asyncio.sleep(delay)

    # -- shutdown --------------------------------------------------------------
    async def close(self) -> None:
        if self._closed:
            return
        if self._listener is not None:
            self._listener.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._listener
        if self._session_id is not None and self._http is not None:
            # Tell the server the session is over; 405 (not allowed) is a fine answer too.
            with contextlib.suppress(aiohttp.ClientError, TimeoutError):
                headers = self._headers("application/json", "DELETE")
                async with self._http.delete(
                    self.url,
                    headers=headers,
                    timeout=aiohttp.ClientTimeout(total=2.0),
                    allow_redirects=not _carries_credentials(headers),
                ):
                    pass
        self._closed = True
        if self._own_http and self._http is not None:
            await self._http.close()
        if self._on_closed is not None:
            self._on_closed(ConnectionClosed("client closed the connection"))


def _carries_credentials(headers: Mapping[str, str]) -> bool:
    """A request with an Authorization header (our OAuth token or the caller's own) never
    follows a redirect: aiohttp would drop the header only across origins, and the body,
    the DPoP proof and any credential in other headers would go wherever we are pointed."""
    return any(name.lower() == "authorization" for name in headers)


def _header_text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return encode_header_value(str(value))
