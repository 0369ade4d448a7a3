"""Client: the public MCP client, an async context manager over one transport
(specs/client.md, "Defaults and eras")."""

from __future__ import annotations

import asyncio
import dataclasses
import inspect
import os
import time
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, TextIO

from codex_mcp.codex_compat.names import qualify_tool_name
from codex_mcp.core.errors import McpError
from codex_mcp.core.jsonrpc import JsonObject
from codex_mcp.core.request_meta import HEADER_MISMATCH
from codex_mcp.core.versions import STATELESS_VERSIONS, V2025_06_18

from . import telemetry as _telemetry
from .approval import Approval, check_approval
from .elicitation import with_defaults
from .errors import McpClientError, is_retryable
from .paging import listing
from .session import ClientSession, NotificationHandler, ProgressHandler, RequestHandler
from .skills import SkillFeatures
from .stateless import StatelessProfile, stateless_capabilities
from .stateless_features import StatelessFeatures
from .telemetry import TOOL_CALL_FAILURE, TOOL_CALL_START, TOOL_CALL_SUCCESS, Telemetry
from .transports.base import Transport
from .transports.legacy_sse import LegacySseTransport
from .transports.memory import MemoryTransport
from .transports.stdio import Framing, StdioTransport
from .transports.streamable_http import StreamableHttpTransport
from .types import (
    CallToolResult,
    Completion,
    GetPromptResult,
    InitializeResult,
    Page,
    Prompt,
    ReadResourceResult,
    Resource,
    ResourceTemplate,
    Tool,
)

if TYPE_CHECKING:
    from .oauth import OAuth

DEFAULT_CLIENT_NAME = "codex-python"
DEFAULT_CLIENT_VERSION = "0.0.0"
DEFAULT_PROTOCOL_VERSION = V2025_06_18
DEFAULT_INIT_TIMEOUT = 10.0
DEFAULT_LIST_TIMEOUT = 30.0
DEFAULT_CALL_TIMEOUT = 60.0
DEFAULT_RETRIES = 3
BASE_DELAY = 0.1
MAX_DELAY = 5.0

#: Called with the 1-based number of the retry about to happen: the delay in seconds, or
#: a coroutine function that waits by itself (specs/client.md, "Retries").
Backoff = Callable[[int], float | Awaitable[float | None] | None]

ToolFilter = Callable[[Tool], object]
Roots = Sequence[JsonObject] | Callable[[], Sequence[JsonObject]]
#: "legacy" (the initialize handshake), "auto" (probe 2026-07-28, fall back), or a
#: 2026-07-28-era version to speak without a probe.
Mode = str


def exponential_backoff(attempt: int) -> float:
    """100 ms, 200 ms, 400 ms, ... doubling up to 5 s."""
    return float(min(BASE_DELAY * 2 ** max(attempt - 1, 0), MAX_DELAY))


async def wait_before_retry(backoff: Backoff | None, attempt: int) -> None:
    if backoff is None:
        return
    delay = backoff(attempt)
    if inspect.isawaitable(delay):
        delay = await delay
    if delay:
        await asyncio.sleep(float(delay))


class Client(StatelessFeatures, SkillFeatures):
    def __init__(
        self,
        transport: Transport,
        *,
        client_name: str = DEFAULT_CLIENT_NAME,
        client_title: str | None = None,
        client_version: str = DEFAULT_CLIENT_VERSION,
        capabilities: JsonObject | None = None,
        protocol_version: str = DEFAULT_PROTOCOL_VERSION,
        server_name: str | None = None,
        timeout: float = DEFAULT_INIT_TIMEOUT,
        sampling_handler: RequestHandler | None = None,
        elicitation_handler: RequestHandler | None = None,
        roots: Roots | None = None,
        logging_handler: Callable[[JsonObject], object] | None = None,
        on_notification: NotificationHandler | None = None,
        telemetry: Telemetry | None = None,
        mode: Mode = "legacy",
    ) -> None:
        """`server_name` is the prefix for qualified tool names (default: the server's own
        name from its serverInfo). `timeout` bounds the initialize handshake. Handlers for
        server-to-client requests get the request params and return the result (sync or
        async); giving one declares the matching client capability. `mode`: "legacy",
        "auto" (2026-07-28 when the server speaks it) or "2026-07-28"."""
        if mode not in ("legacy", "auto") and mode not in STATELESS_VERSIONS:
            raise ValueError(f'mode must be "legacy", "auto" or one of {STATELESS_VERSIONS}')
        self.mode = mode
        self.transport = transport
        self.client_info: JsonObject = {"name": client_name, "version": client_version}
        if client_title:
            self.client_info["title"] = client_title
        self.capabilities: JsonObject = dict(capabilities or {})
        self.protocol_version_requested = protocol_version
        self._server_name = server_name
        self.timeout = timeout
        self.telemetry = telemetry or _telemetry.default
        self.session = ClientSession(transport)
        self.session.notification_handlers.append(self._on_notification)
        self.session.on_reinitialized = lambda _result: self.invalidate_cache()
        self._logging_handler = logging_handler
        self._roots = roots
        if on_notification is not None:
            self.session.notification_handlers.append(on_notification)
        if sampling_handler is not None:
            self.capabilities.setdefault("sampling", {})
            self.session.request_handlers["sampling/createMessage"] = sampling_handler
        if elicitation_handler is not None:
            self.capabilities.setdefault("elicitation", {})
            self.session.request_handlers["elicitation/create"] = with_defaults(elicitation_handler)
        if roots is not None:
            self.capabilities.setdefault("roots", {"listChanged": True})
            self.session.request_handlers["roots/list"] = self._list_roots
        self._tool_cache: Page[Tool] | None = None

    # -- constructors ----------------------------------------------------------
    @classmethod
    def stdio(
        cls,
        command: Sequence[str],
        *,
        env: Mapping[str, str] | None = None,
        cwd: str | os.PathLike[str] | None = None,
        framing: Framing = "ndjson",
        errlog: TextIO | None = None,
        **options: Any,
    ) -> Client:
        """A client for a server run as a subprocess (its environment is ours plus `env`)."""
        return cls(
            StdioTransport(command, env=env, cwd=cwd, framing=framing, errlog=errlog), **options
        )

    @classmethod
    def http(
        cls,
        url: str,
        *,
        headers: Mapping[str, str] | None = None,
        auth: OAuth | None = None,
        **options: Any,
    ) -> Client:
        """A client for a Streamable HTTP server (`http://host:port/mcp`); `auth` answers
        the server's 401s with OAuth (codex_mcp.client.oauth)."""
        return cls(StreamableHttpTransport(url, headers=headers, auth=auth), **options)

    @classmethod
    def sse(cls, url: str, *, headers: Mapping[str, str] | None = None, **options: Any) -> Client:
        """A client for a legacy HTTP+SSE server (`http://host:port/sse`)."""
        return cls(LegacySseTransport(url, headers=headers), **options)

    @classmethod
    def memory(cls, server: Any, **options: Any) -> Client:
        """A client wired in-process to a codex-mcp server (or its ServerCore)."""
        return cls(MemoryTransport(server), **options)

    # -- lifetime --------------------------------------------------------------
    async def __aenter__(self) -> Client:
        await self.connect()
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()

    async def connect(self) -> InitializeResult:
        """Start the transport and run the handshake (initialize, notifications/initialized),
        or, in a stateless mode, server/discover (falling back to initialize in "auto")."""
        try:
            await self.session.start()
            if self.mode != "legacy":
                era = StatelessProfile(
                    version=self.mode if self.mode in STATELESS_VERSIONS else STATELESS_VERSIONS[0],
                    client_info=self.client_info,
                    capabilities=stateless_capabilities(self.capabilities),
                )
                found = await self.session.discover(
                    era, self.timeout, fall_back=self.mode == "auto"
                )
                if found is not None:
                    return found
            return await self.session.initialize(
                {
                    "protocolVersion": self.protocol_version_requested,
                    "capabilities": self.capabilities,
                    "clientInfo": self.client_info,
                },
                self.timeout,
            )
        except BaseException:
            await self.session.aclose()
            raise

    initialize = connect  # the Elixir client's name (and `handshake`, its older alias)
    handshake = connect

    async def aclose(self) -> None:
        await self.session.aclose()

    # -- what the server said at initialize -------------------------------------
    @property
    def init_result(self) -> InitializeResult:
        if self.session.init_result is None:
            raise McpClientError("not connected: use `async with` or await connect() first")
        return self.session.init_result

    @property
    def server_capabilities(self) -> JsonObject:
        return self.init_result.capabilities

    @property
    def server_info(self) -> JsonObject:
        return self.init_result.server_info

    @property
    def protocol_version(self) -> str:
        return self.init_result.protocol_version

    @property
    def instructions(self) -> str | None:
        return self.init_result.instructions

    @property
    def server_name(self) -> str | None:
        """The qualification prefix: the one given, else the server's reported name."""
        if self._server_name is not None:
            return self._server_name
        init = self.session.init_result
        name = init.server_info.get("name") if init is not None else None
        return name if isinstance(name, str) else None

    # -- generic ---------------------------------------------------------------
    async def request(
        self, method: str, params: JsonObject | None = None, *, timeout: float | None = None
    ) -> JsonObject:
        """Any request by name; returns the raw result."""
        return await self.session.request(method, params, timeout=timeout)

    async def notify(self, method: str, params: JsonObject | None = None) -> None:
        await self.session.notify_async(method, params)

    async def ping(self, *, timeout: float | None = DEFAULT_LIST_TIMEOUT) -> None:
        """ping (a stateless server has none: server/discover is asked instead)."""
        method = "server/discover" if self.is_stateless else "ping"
        await self.session.request(method, timeout=timeout)

    async def set_logging_level(self, level: str) -> None:
        """logging/setLevel; with a stateless server, the level every later request asks for."""
        era = self.session.stateless
        if era is not None:
            self.session.stateless = dataclasses.replace(era, log_level=level)
            return
        await self.session.request(
            "logging/setLevel", {"level": level}, timeout=DEFAULT_LIST_TIMEOUT
        )

    # -- tools -----------------------------------------------------------------
    async def list_tools(
        self,
        *,
        cache: bool = True,
        allow: Iterable[str] | None = None,
        deny: Iterable[str] | None = None,
        filter: ToolFilter | None = None,
        qualify: bool = False,
        cursor: str | None = None,
        timeout: float | None = DEFAULT_LIST_TIMEOUT,
    ) -> Page[Tool]:
        """Every tool (pagination is followed, so `next_cursor` is None unless the listing
        ran past paging.MAX_PAGES pages), filtered: `allow` keeps only those names,
        `deny` drops those, `filter(tool)` keeps what it returns truthy for. With
        `qualify=True` each tool gets `qualified_name` (duplicates after qualification are
        dropped). The unfiltered listing is cached until `cache=False`, a
        notifications/tools/list_changed, or a re-established session. `cursor` starts the
        listing at that page (never cached)."""
        if cache and cursor is None and self._tool_cache is not None:
            tools = self._tool_cache
        else:
            page = await self._list("tools/list", "tools", cursor, True, timeout)
            items = list(page)
            learn = getattr(self.transport, "learn_tools", None)
            if self.is_stateless and learn is not None:
                items = learn(items)  # x-mcp-header arguments travel as headers too
            tools = Page(map(Tool.from_json, items), page.next_cursor, page.raw)
            if cursor is None:
                self._tool_cache = tools
        allowed = set(allow) if allow is not None else None
        denied = set(deny or ())
        out = [
            t
            for t in tools
            if (allowed is None or t.name in allowed)
            and t.name not in denied
            and (filter is None or filter(t))
        ]
        return Page(self._qualify(out) if qualify else out, tools.next_cursor, tools.raw)

    def _qualify(self, tools: list[Tool]) -> list[Tool]:
        server = self.server_name
        if server is None:
            raise McpClientError("qualify=True needs a server_name (the server reported none)")
        seen: set[str] = set()
        out = []
        for tool in tools:
            name = qualify_tool_name(server, tool.name)
            if name not in seen:
                seen.add(name)
                out.append(tool.qualified(server, name))
        return out

    def invalidate_cache(self) -> None:
        self._tool_cache = None

    async def call_tool(
        self,
        name: str,
        arguments: JsonObject | None = None,
        *,
        retries: int = DEFAULT_RETRIES,
        backoff: Backoff | None = exponential_backoff,
        timeout: float | None = DEFAULT_CALL_TIMEOUT,
        approval: Approval | None = None,
        context: JsonObject | None = None,
        on_progress: ProgressHandler | None = None,
        idempotent: bool = False,
        meta: JsonObject | None = None,
    ) -> CallToolResult:
        """Call a tool. `approval(tool, arguments, context)` (or fewer arguments) runs first;
        a denial raises ApprovalDenied without asking the server. Each attempt has `timeout`
        seconds; on expiry the server gets notifications/cancelled and RequestTimeout is raised.
        Retryable failures (see errors.py) are retried up to `retries` times, waiting
        `backoff(n)` before retry n, except a failure that leaves the call's fate unknown (a
        stream cut after the request was sent): the tool may have run, so it is re-run only
        when the caller says it is `idempotent`. `meta` is sent as the request's `_meta`.
        A result with isError=true is returned, not raised."""
        arguments = arguments if arguments is not None else {}
        await check_approval(approval, name, arguments, context or {})
        server_name = self.server_name
        about = {"tool": name, "arguments": arguments, "server_name": server_name}
        self.telemetry.emit(TOOL_CALL_START, {"system_time": _telemetry.now_ns()}, dict(about))
        relisted = False
        started = time.monotonic()
        attempt = 0
        with _telemetry.tool_span(name, server_name) as span:
            if self.session.transport.session_id:
                span.set_attribute("mcp.session.id", self.session.transport.session_id)
            while True:
                attempt += 1
                try:
                    raw = await self.session.request(
                        "tools/call",
                        {"name": name, "arguments": arguments},
                        timeout=timeout,
                        on_progress=on_progress,
                        meta=meta,
                    )
                    if raw.get("resultType") == "task":
                        raw = await self._follow_task(raw, timeout)
                    result = CallToolResult.from_json(raw)
                except Exception as exc:
                    if _needs_tool_headers(exc) and not relisted:
                        relisted = True  # learn its x-mcp-header arguments, then again
                        await self.list_tools(cache=False)
                        attempt -= 1
                        continue
                    if attempt <= retries and is_retryable(exc, idempotent=idempotent):
                        await wait_before_retry(backoff, attempt)
                        continue
                    span.set_attribute("mcp.tool_call.attempts", attempt)
                    _telemetry.mark_span_failed(span, exc)
                    self.telemetry.emit(
                        TOOL_CALL_FAILURE,
                        self._measure(started),
                        {**about, "reason": exc, "attempt": attempt},
                    )
                    raise
                span.set_attribute("mcp.tool_call.attempts", attempt)
                if result.is_error:
                    span.set_attribute("error.type", "tool_error")
                self.telemetry.emit(
                    TOOL_CALL_SUCCESS, self._measure(started), {**about, "attempt": attempt}
                )
                return result

    @staticmethod
    def _measure(started: float) -> dict[str, Any]:
        return {"duration": time.monotonic() - started, "system_time": _telemetry.now_ns()}

    # -- resources, prompts, completion ----------------------------------------
    async def list_resources(
        self,
        cursor: str | None = None,
        *,
        all_pages: bool = False,
        timeout: float | None = DEFAULT_LIST_TIMEOUT,
    ) -> Page[Resource]:
        """One page from `cursor` (its `next_cursor` asks for the next), or every page from
        there with `all_pages=True` (at most paging.MAX_PAGES: past those, `next_cursor`
        says where to go on from)."""
        page = await self._list("resources/list", "resources", cursor, all_pages, timeout)
        return page.map(Resource.from_json)

    async def list_resource_templates(
        self,
        cursor: str | None = None,
        *,
        all_pages: bool = False,
        timeout: float | None = DEFAULT_LIST_TIMEOUT,
    ) -> Page[ResourceTemplate]:
        """As list_resources, for the resource templates."""
        page = await self._list(
            "resources/templates/list", "resourceTemplates", cursor, all_pages, timeout
        )
        return page.map(ResourceTemplate.from_json)

    async def list_prompts(
        self,
        cursor: str | None = None,
        *,
        all_pages: bool = False,
        timeout: float | None = DEFAULT_LIST_TIMEOUT,
    ) -> Page[Prompt]:
        """As list_resources, for the prompts."""
        page = await self._list("prompts/list", "prompts", cursor, all_pages, timeout)
        return page.map(Prompt.from_json)

    async def read_resource(
        self, uri: str, *, timeout: float | None = DEFAULT_LIST_TIMEOUT
    ) -> ReadResourceResult:
        raw = await self.session.request("resources/read", {"uri": uri}, timeout=timeout)
        return ReadResourceResult.from_json(raw)

    async def subscribe_resource(self, uri: str) -> None:
        if self.is_stateless:
            raise McpClientError("a 2026-07-28 server has no resources/subscribe: use listen()")
        await self.session.request(
            "resources/subscribe", {"uri": uri}, timeout=DEFAULT_LIST_TIMEOUT
        )

    async def unsubscribe_resource(self, uri: str) -> None:
        await self.session.request(
            "resources/unsubscribe", {"uri": uri}, timeout=DEFAULT_LIST_TIMEOUT
        )

    async def get_prompt(
        self,
        name: str,
        arguments: Mapping[str, str] | None = None,
        *,
        timeout: float | None = DEFAULT_LIST_TIMEOUT,
    ) -> GetPromptResult:
        params: JsonObject = {"name": name}
        if arguments:
            params["arguments"] = dict(arguments)
        return GetPromptResult.from_json(
            await self.session.request("prompts/get", params, timeout=timeout)
        )

    async def complete(
        self,
        ref: JsonObject,
        argument: str,
        value: str,
        *,
        context_arguments: Mapping[str, str] | None = None,
        timeout: float | None = DEFAULT_LIST_TIMEOUT,
    ) -> Completion:
        """completion/complete; `ref` is {"type": "ref/prompt", "name": ...} or
        {"type": "ref/resource", "uri": ...}."""
        params: JsonObject = {"ref": ref, "argument": {"name": argument, "value": value}}
        if context_arguments:
            params["context"] = {"arguments": dict(context_arguments)}
        return Completion.from_json(
            await self.session.request("completion/complete", params, timeout=timeout)
        )

    async def _list(
        self, method: str, key: str, cursor: str | None, all_pages: bool, timeout: float | None
    ) -> Page[JsonObject]:
        return await listing(self.session, method, key, cursor, timeout, all_pages=all_pages)

    # -- roots and notifications -------------------------------------------------
    def _list_roots(self, _params: JsonObject) -> JsonObject:
        roots = self._roots() if callable(self._roots) else self._roots
        return {"roots": list(roots or [])}

    async def set_roots(self, roots: Roots) -> None:
        """Replace the roots and tell the server (notifications/roots/list_changed)."""
        self._roots = roots
        if not self.is_stateless:  # a stateless server asks for the roots when it needs them
            await self.session.notify_async("notifications/roots/list_changed")

    def _on_notification(self, method: str, params: JsonObject) -> None:
        if method == "notifications/tools/list_changed":
            self.invalidate_cache()
        elif method == "notifications/message" and self._logging_handler is not None:
            self._logging_handler(params)


def _needs_tool_headers(exc: Exception) -> bool:
    """A stateless HTTP server refused a call whose Mcp-Param headers we could not know."""
    return isinstance(exc, McpError) and exc.code == HEADER_MISMATCH and exc.method == "tools/call"
