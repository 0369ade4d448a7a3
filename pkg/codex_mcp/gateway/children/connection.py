"""One connection to a child server through the library's client: transport, session, handshake."""

from __future__ import annotations

import asyncio
import contextlib
import os
from collections.abc import Awaitable, Callable, Hashable
from typing import Any, Literal

from codex_mcp import __version__
from codex_mcp.client.errors import ConnectionClosed
from codex_mcp.client.paging import every_page
from codex_mcp.client.session import ClientSession, RequestHandler
from codex_mcp.client.stateless import StatelessProfile, stateless_capabilities
from codex_mcp.client.transports.base import Transport
from codex_mcp.client.transports.stdio import StdioTransport
from codex_mcp.client.types import InitializeResult
from codex_mcp.core.errors import McpError
from codex_mcp.core.jsonrpc import METHOD_NOT_FOUND, JsonObject
from codex_mcp.core.request_meta import UNSUPPORTED_PROTOCOL_VERSION
from codex_mcp.core.versions import LATEST_VERSION, STATELESS_VERSIONS
from codex_mcp.settings import DEFAULTS

from ..config import early
from ..config.load import child_environment
from ..config.model import ServerConfig, StdioTarget
from ..errors import exited_error, normalize_exception, spawn_error
from ..logins import child_oauth
from .channel import LegacyChannel, StatelessChannel
from .inflight import InFlight
from .lifetime import Watchdog, die_with_parent, kill_group
from .reaper import Lineage

#: on_notification(method, params, origin, inflight): origin is the id of our request whose
#: stream carried the notification (Streamable HTTP), or None; `inflight`, the connection's.
NotificationSink = Callable[[str, JsonObject, Hashable, InFlight], None]

#: The transport to a child other than what its entry says (a test's in-memory server).
OpenTransport = Callable[[ServerConfig], Transport]

CLIENT_INFO = {"name": "codex-mcp-gateway", "version": __version__}

#: How a child is first spoken to (child.py chooses): `initialize`, then
#: `server/discover` if that is refused; `server/discover`, then `initialize` if that is
#: refused; or `server/discover` alone (a child refusing it fails to start).
Handshake = Literal["initialize", "discover", "discover-only"]
_MAX_PAGES = 100


class StartFailed(Exception):
    """The child could not be started; `error` is the normalized JSON-RPC error."""

    def __init__(self, error: JsonObject) -> None:
        super().__init__(error["message"])
        self.error = error


class ChildSession(ClientSession):
    """A ClientSession whose notifications go, with their origin, to the gateway."""

    def __init__(
        self, transport: Transport, on_notification: NotificationSink, inflight: InFlight
    ) -> None:
        super().__init__(transport)
        self._sink = on_notification
        self.inflight = inflight

    def handle_notification(self, method: str, params: JsonObject, origin: Hashable) -> None:
        self._sink(method, params, origin, self.inflight)

    def receive(self, message: Any, origin: Hashable = None) -> bool:
        """A relay's hot path: the child's result for one of our requests (an id we minted,
        a result object and nothing else to read) goes straight to that request; anything
        else takes the peer's general path, which checks every case."""
        if type(message) is dict:
            request_id = message.get("id")
            result = message.get("result")
            if (
                type(request_id) is int
                and type(result) is dict
                and "error" not in message
                and "method" not in message
            ):
                pending = self._outgoing.pop(request_id, None)
                if pending is not None:
                    pending.succeed(result)  # a relayed call's, for one (relay.RelayedCall)
                    return False
        return super().receive(message, origin)


#: What holds a connection: told each front request's method and params before it is sent,
#: it answers None (send it) or the answer to give instead (pinning: trust/gate.py).
Gate = Callable[[str, JsonObject], Awaitable[JsonObject | None]]


class Connection:
    """A started, initialized child: its session, what it said at initialize, and the
    channel requests reach it through (its revision hidden: channel.py)."""

    def __init__(self, session: ChildSession, transport: Transport, watchdog: Watchdog) -> None:
        self.session = session
        self.transport = transport
        self.watchdog = watchdog
        self.capabilities: JsonObject = {}
        self.channel = LegacyChannel("", session, session.inflight)
        #: A call can take the relay's hot path: an initialized stdio child, whose calls
        #: have no timeout of their own (HTTP's client re-establishes expired sessions).
        self.direct = False
        #: While set, each front request waits for it and is decided by it before it reaches
        #: the child, and none takes the relay's hot path (`direct` is False meanwhile).
        self.gate: Gate | None = None
        #: What its process started, stopped with it (a stdio child's, once it runs).
        self.lineage: Lineage | None = None

    async def admitted(self, method: str, params: JsonObject | None) -> JsonObject | None:
        """None: a front request may be sent on it now; else the answer it gets instead."""
        gate = self.gate
        return None if gate is None else await gate(method, params or {})

    @property
    def inflight(self) -> InFlight:
        return self.session.inflight

    @property
    def pid(self) -> int | None:
        process = self.transport.process if isinstance(self.transport, StdioTransport) else None
        return process.pid if process is not None else None

    @property
    def returncode(self) -> int | None:
        process = self.transport.process if isinstance(self.transport, StdioTransport) else None
        return process.returncode if process is not None else None

    @property
    def stderr_tail(self) -> str:
        return self.transport.stderr_tail if isinstance(self.transport, StdioTransport) else ""

    async def list_all(self, method: str, key: str, timeout: float) -> list[JsonObject]:
        """Every page of one listing (a cursor seen twice, or the hundredth page, ends it)."""
        page = await every_page(self.session, method, key, timeout=timeout, max_pages=_MAX_PAGES)
        return page.items

    async def close(self) -> None:
        """Stop the child: its session, its process (stdin closed, SIGTERM, SIGKILL), and
        whatever it started, in its process group or not."""
        pid, lineage = self.pid, self.lineage
        if lineage is not None:
            lineage.catch()
        with contextlib.suppress(Exception):
            # Ours: what is pending (the gateway's own listen on a 2026-07-28 child) fails
            # with it, without the session's warning about failed requests.
            self.session.close(ConnectionClosed("the gateway closed the connection"))
            await self.session.aclose()
        if pid is not None:
            kill_group(pid)
            self.watchdog.forget(pid)
        if lineage is not None:
            await lineage.stop()


#: How a user raises the cap on one child message, for the error that names it.
MESSAGE_LIMIT_SETTING = "CODEX_MCP_MAX_MESSAGE_BYTES or --max-message-bytes"


def make_transport(
    server: ServerConfig,
    environ: dict[str, str] | None = None,
    *,
    max_message_bytes: int = DEFAULTS.max_message_bytes,
) -> Transport:
    target = server.target
    if isinstance(target, StdioTarget):
        env = child_environment(target.env)
        return StdioTransport(
            [target.command, *target.args],
            env=env,
            inherit_env=False,
            cwd=target.cwd,
            preexec_fn=die_with_parent(),
            shutdown_timeout=1.0,
            max_message_bytes=max_message_bytes,
            limit_setting=MESSAGE_LIMIT_SETTING,
            started=early.take(server.name, target, env),
        )
    # Imported here: aiohttp (~150 ms) is for HTTP children only.
    from codex_mcp.client.transports.legacy_sse import LegacySseTransport
    from codex_mcp.client.transports.streamable_http import StreamableHttpTransport

    headers = target.resolved_headers(dict(os.environ if environ is None else environ))
    if target.transport == "sse":
        return LegacySseTransport(target.url, headers=headers)
    return StreamableHttpTransport(target.url, headers=headers, auth=child_oauth(target, headers))


async def connect(
    server: ServerConfig,
    *,
    watchdog: Watchdog,
    on_notification: NotificationSink,
    on_closed: Callable[[Exception], object],
    handlers: dict[str, RequestHandler],
    capabilities: JsonObject,
    timeout: float,
    max_message_bytes: int = DEFAULTS.max_message_bytes,
    read_gate: Callable[[], Awaitable[object] | None] | None = None,
    open_transport: OpenTransport | None = None,
    handshake: Handshake = "initialize",
) -> Connection:
    """Start the child and run the handshake within `timeout` seconds. Raises StartFailed
    (spawn_error for a child that cannot run, exits or stays silent; the child's own error
    when it refuses the handshake); nothing is left running then. `open_transport` (tests:
    an in-memory server) replaces what the server's entry says to start."""
    if open_transport is not None:
        transport = open_transport(server)
    else:
        transport = make_transport(server, max_message_bytes=max_message_bytes)
    if isinstance(transport, StdioTransport):
        transport.read_gate = read_gate
    session = ChildSession(transport, on_notification, InFlight())
    session.request_handlers.update(handlers)
    connection = Connection(session, transport, watchdog)
    try:
        async with asyncio.timeout(timeout):
            await session.start()
            if connection.pid is not None:
                watchdog.watch(connection.pid)
                connection.lineage = Lineage(connection.pid)
            result = await _handshake(session, capabilities, handshake)
    except asyncio.CancelledError:
        await connection.close()
        raise
    except Exception as exc:
        await connection.close()
        raise StartFailed(_start_error(server, connection, exc, timeout)) from exc
    connection.capabilities = result.capabilities
    kind = LegacyChannel if session.stateless is None else StatelessChannel
    connection.channel = kind(server.name, session, session.inflight)
    connection.direct = (
        kind is LegacyChannel
        and isinstance(server.target, StdioTarget)
        and server.tool_timeout_sec is None
    )
    session.on_closed = on_closed
    if session.closed:  # it died right after the handshake: report it like any death
        on_closed(session.closed_error())
    return connection


async def _handshake(
    session: ChildSession, capabilities: JsonObject, handshake: Handshake
) -> InitializeResult:
    """`initialize`, or for a 2026-07-28-only child `server/discover`; `server/discover`
    first when every front this child serves speaks 2026-07-28 (specs/gateway.md, "Eras")."""
    params: dict[str, Any] = {
        "protocolVersion": LATEST_VERSION,
        "capabilities": capabilities,
        "clientInfo": CLIENT_INFO,
    }
    era = StatelessProfile(STATELESS_VERSIONS[0], CLIENT_INFO, stateless_capabilities(capabilities))
    if handshake != "initialize":
        found = await session.discover(era, None, fall_back=handshake == "discover")
        if found is not None:
            return found
        return await session.initialize(params, None)  # it refused: a legacy-only child
    try:
        return await session.initialize(params, None)
    except McpError as exc:
        if exc.code not in (UNSUPPORTED_PROTOCOL_VERSION, METHOD_NOT_FOUND):
            raise
        found = await session.discover(era, None, fall_back=False)
        assert found is not None  # without fall_back it answers or raises
        return found


def _start_error(
    server: ServerConfig, connection: Connection, exc: Exception, timeout: float
) -> JsonObject:
    target = server.target
    command = target.command if isinstance(target, StdioTarget) else None
    if isinstance(exc, TimeoutError):
        silent = f"no answer to initialize within {timeout:g} s"
        return spawn_error(silent, server=server.name, command=command or "")
    if isinstance(exc, ConnectionClosed) and command is not None:
        return exited_error(
            connection.returncode, server=server.name, stderr_tail=connection.stderr_tail
        )
    return normalize_exception(exc, server=server.name, command=command)
