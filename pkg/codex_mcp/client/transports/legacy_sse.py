"""The HTTP+SSE transport of MCP 2024-11-05 (specs/client.md, "Transports")."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Mapping
from urllib.parse import urljoin, urlsplit

import aiohttp

from codex_mcp.core import jsonrpc
from codex_mcp.core.errors import McpError
from codex_mcp.core.jsonrpc import JsonObject

from ..errors import ConnectionClosed, TransportError
from .base import OnClosed, OnMessage, Transport
from .http_errors import http_error, map_exceptions
from .sse import iter_sse

log = logging.getLogger("codex_mcp.client.sse")


class LegacySseTransport(Transport):
    def __init__(
        self,
        url: str,
        *,
        headers: Mapping[str, str] | None = None,
        http: aiohttp.ClientSession | None = None,
        connect_timeout: float = 10.0,
    ) -> None:
        self.url = url
        self.headers = dict(headers or {})
        self.connect_timeout = connect_timeout
        self._http = http
        self._own_http = http is None
        self._endpoint: str | None = None
        self._reader: asyncio.Task[None] | None = None
        self._on_message: OnMessage | None = None
        self._on_closed: OnClosed | None = None
        self._closed = False

    def describe(self) -> str:
        return self.url

    async def start(self, on_message: OnMessage, on_closed: OnClosed) -> None:
        self._on_message, self._on_closed = on_message, on_closed
        if self._http is None:
            timeout = aiohttp.ClientTimeout(total=None, sock_connect=self.connect_timeout)
            self._http = aiohttp.ClientSession(timeout=timeout)
        endpoint: asyncio.Future[str] = asyncio.get_running_loop().create_future()
        self._reader = asyncio.get_running_loop().create_task(self._read(endpoint))
        try:
            self._endpoint = await asyncio.wait_for(asyncio.shield(endpoint), self.connect_timeout)
        except TimeoutError:
            await self.close()
            raise TransportError(
                f"{self.url}: no endpoint event within {self.connect_timeout:g} s"
            ) from None
        except BaseException:
            await self.close()
            raise

    async def _read(self, endpoint: asyncio.Future[str]) -> None:
        assert self._http is not None
        reason: BaseException | None = None
        try:
            headers = {**self.headers, "Accept": "text/event-stream"}
            async with self._http.get(self.url, headers=headers) as resp:
                if resp.status >= 400:
                    raise await http_error(self.url, resp)
                async for event in iter_sse(resp.content):
                    if event.event == "endpoint" and not endpoint.done():
                        endpoint.set_result(self._checked_endpoint(event.data.strip()))
                    elif event.event == "message" and event.data:
                        self._deliver(event.data)
            reason = ConnectionClosed(f"{self.url}: the server closed the event stream")
        except asyncio.CancelledError:
            reason = ConnectionClosed("client closed the connection")
            raise
        except (aiohttp.ClientError, TransportError) as exc:
            reason = (
                exc
                if isinstance(exc, ConnectionClosed)
                else ConnectionClosed(
                    f"{self.url}: event stream failed: {exc or type(exc).__name__}"
                )
            )
            if not endpoint.done():
                endpoint.set_exception(exc if isinstance(exc, TransportError) else reason)
        finally:
            if not endpoint.done():
                endpoint.set_exception(reason or ConnectionClosed("event stream closed"))
            if self._on_closed is not None:
                self._on_closed(reason)

    def _checked_endpoint(self, data: str) -> str:
        endpoint = urljoin(self.url, data)
        # The spec: the endpoint must be on the same origin as the stream.
        if urlsplit(endpoint)[:2] != urlsplit(self.url)[:2]:
            raise TransportError(
                f"{self.url}: endpoint {endpoint} is on another origin", retryable=False
            )
        return endpoint

    def _deliver(self, data: str) -> None:
        try:
            message = jsonrpc.decode(data)
        except McpError as exc:
            log.warning("ignoring malformed message from %s: %s", self.url, exc.message)
            return
        if self._on_message is not None:
            self._on_message(message)

    async def send(self, message: JsonObject) -> None:
        if self._closed or self._http is None or self._endpoint is None:
            raise ConnectionClosed(f"SSE transport to {self.url} is closed")
        headers = {**self.headers, "Content-Type": "application/json"}
        with map_exceptions(f"POST to {self._endpoint}"):
            async with self._http.post(
                self._endpoint, data=jsonrpc.encode(message), headers=headers
            ) as resp:
                if resp.status >= 400:
                    raise await http_error(self._endpoint, resp)

    async def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        if self._reader is not None:
            self._reader.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._reader
        if self._own_http and self._http is not None:
            await self._http.close()
