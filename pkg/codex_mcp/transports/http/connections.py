"""Connection hygiene: read timeouts, a cap on open connections, one log line per fault
(decision 27; specs/http.md, "Limits and timeouts")."""

from __future__ import annotations

import asyncio
import logging
import socket
from collections.abc import Callable
from http import HTTPStatus
from typing import Any, Final

from aiohttp import web
from aiohttp.http_exceptions import ContentEncodingError
from aiohttp.streams import StreamReader
from aiohttp.typedefs import Handler
from aiohttp.web_protocol import RequestHandler

from ...core.log_names import printable
from .errors import TRANSPORT_ERROR, BodyTimeout, error_body, error_response
from .faults import FaultLog
from .security import OPEN_PATH_SUFFIXES

log = logging.getLogger("codex_mcp.http")

#: Connections let in past the cap when none is idle, for health probes.
PROBE_RESERVE: Final = 8
#: The listen backlog (aiohttp's default).
BACKLOG: Final = 128
#: How long a connection cut for a slow request keeps reading (and dropping) what its
#: client still sends after the 408, so the client can read the 408 (see _linger).
LINGER_SECONDS: Final = 2.0

# Connection states.
_WAITING: Final = "waiting for headers"
_IDLE: Final = "idle between requests"
_SERVING: Final = "serving a request"
#: answered before its body was read: aiohttp reads the rest (for up to its lingering_time)
_DRAINING: Final = "reading an answered request's unread body"
# What a connection counts against.
_SLOT: Final = "slot"
_PROBE: Final = "probe reserve"
_NOTHING: Final = "nothing"


def when_read(request: web.BaseRequest, callback: Callable[[], None]) -> None:
    """Call `callback` once the client has read this request's response, which has ended,
    to its end: when its next request begins on the same connection. An HTTP/1.1 client
    reuses a connection only once it has read the response on it whole; a pipelined
    request, sent before that, comes while this one is served and does not count. Never
    called when that cannot be known: the connection closes first (a client may close it
    with the end in its buffers, unread), or it is not one of ours (an in-process test
    server)."""
    connection = request.protocol
    if isinstance(connection, GuardedConnection) and connection.transport is not None:
        connection.on_read = callback


def raw_response(status: str, message: str) -> bytes:
    """A complete HTTP/1.1 error response for a connection we close before aiohttp reads it."""
    body = error_body(message, TRANSPORT_ERROR)
    head = (
        f"HTTP/1.1 {status}\r\nContent-Type: application/json\r\n"
        f"Content-Length: {len(body)}\r\nRetry-After: 1\r\nConnection: close\r\n\r\n"
    )
    return head.encode() + body


def connection_cap(configured: int, backlog: int = BACKLOG) -> int:
    """`configured`, or (0) what the open-file limit allows: asyncio accepts a whole
    backlog before any of those connections is counted, so room for one full backlog,
    the probe reserve and the process's own files (logs, tool files, child servers) is
    kept back, and a quarter of the limit at least."""
    if configured > 0:
        return configured
    try:
        import resource

        soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    except (ImportError, OSError, ValueError):  # no such limit on this platform
        return 1024
    if soft == resource.RLIM_INFINITY:
        return 65536
    return max(16, soft - max(soft // 4, backlog + PROBE_RESERVE + 64))


class ConnectionLimits:
    """What every connection of a listener shares: the timeouts, the cap and who is idle."""

    def __init__(
        self,
        max_connections: int,
        header_timeout: float,
        body_timeout: float,
        body_min_rate: int = 0,
    ) -> None:
        self.max_connections = max_connections
        self.header_timeout = header_timeout
        self.body_timeout = body_timeout
        self.body_min_rate = body_min_rate
        self.open = 0  # connections holding a slot
        self.probes = 0  # connections let in on the probe reserve
        #: Connections that hold a slot and serve no request, oldest first: evicted at the cap.
        self.idle: dict[GuardedConnection, None] = {}
        self.too_slow = raw_response(
            "408 Request Timeout",
            f"Request Timeout: headers not complete within {header_timeout:g} s",
        )
        self.full = raw_response(
            "503 Service Unavailable",
            f"Too many connections (at most {max_connections}); try again later",
        )
        self.accept_faults = FaultLog("out of file descriptors or memory")
        self.at_cap = FaultLog(f"connection cap of {max_connections} reached")

    def admit(self) -> str:
        """What a new connection may hold: a slot (perhaps an idle connection's), a place
        on the probe reserve, or nothing (it is refused)."""
        self.accept_faults.ok()
        if self.open < self.max_connections:
            self.open += 1
            self.at_cap.ok()
            return _SLOT
        if self.idle:
            victim = next(iter(self.idle))
            del self.idle[victim]
            victim.slot = _NOTHING  # its slot passes to the newcomer
            victim.force_close()
            self.at_cap("closing the oldest idle connections")
            return _SLOT
        if self.probes < PROBE_RESERVE:
            self.probes += 1
            self.at_cap("every connection is busy; only health probes are served")
            return _PROBE
        self.at_cap("every connection is busy; refusing new ones")
        return _NOTHING

    def no_room(self, asking: GuardedConnection | None = None) -> bool:
        """Would a new connection find no slot (every one serving a request)? The
        connection asking, if it holds a slot, is taken as gone (a probe's is)."""
        serving = self.open - len(self.idle)
        if asking is not None and asking.slot is _SLOT and asking not in self.idle:
            serving -= 1
        return serving >= self.max_connections

    def release(self, connection: GuardedConnection) -> None:
        if connection.slot is _SLOT:
            self.open -= 1
            self.idle.pop(connection, None)
        elif connection.slot is _PROBE:
            self.probes -= 1
        connection.slot = _NOTHING


class GuardedConnection(RequestHandler):
    """aiohttp's HTTP/1.1 protocol, with the read timeouts and the connection cap."""

    __slots__ = (
        "_body",
        "_body_bytes",
        "_body_last",
        "_body_started",
        "_clock",
        "_deadline",
        "_linger_after_answer",
        "_state",
        "_unread",
        "admitted_headers",
        "limits",
        "on_read",
        "slot",
    )

    def __init__(self, manager: web.Server, limits: ConnectionLimits, **kwargs: Any) -> None:
        super().__init__(manager, **kwargs)
        self.limits = limits
        self.slot = _NOTHING
        #: Host, Origin, X-Forwarded-Host of the last request to pass the Host/Origin
        #: checks (security.Guard): the same again passes without being parsed again.
        self.admitted_headers: tuple[str | None, ...] | None = None
        self._state = _WAITING
        self._deadline = 0.0  # when the headers or body being waited for are late
        self._clock: asyncio.TimerHandle | None = None
        self._body: StreamReader | None = None  # a body still arriving
        self._unread: StreamReader | None = None  # an answered request's, while _DRAINING
        self._body_started = 0.0  # when its request's headers were complete
        self._body_bytes = 0  # how much of it (and anything after it) has come since
        self._body_last = 0.0  # when its last bytes came
        self._linger_after_answer = False  # its body was cut: see finish_response
        #: Told once the client has read the last response to its end (`when_read`).
        self.on_read: Callable[[], None] | None = None

    @property
    def probe_only(self) -> bool:
        return self.slot is _PROBE

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.slot = self.limits.admit()
        if self.slot is _NOTHING:
            transport.write(self.limits.full)  # type: ignore[attr-defined]
            transport.close()
            return
        super().connection_made(transport)
        if self.slot is _SLOT:
            self.limits.idle[self] = None
        self._wait_for_headers()

    def connection_lost(self, exc: BaseException | None) -> None:
        self.limits.release(self)
        self._body = self._unread = self.on_read = None
        if self._clock is not None:
            self._clock.cancel()
        super().connection_lost(exc)

    def data_received(self, data: bytes) -> None:
        if not data:  # aiohttp resuming its reading (resume_reading), not bytes coming
            pass
        elif self._state is _IDLE:
            self._wait_for_headers()  # the first bytes of the next request
            if self.on_read is not None:
                self._read()
        elif self._body is not None:
            self._body_last = now = self._loop.time()
            self._body_bytes += len(data)
            self._deadline = self._body_deadline(now)
        super().data_received(data)
        if self._state is _DRAINING and self._unread is not None and self._unread.is_eof():
            self._unread = None  # the rest of that body has come: idle from here
            self._state = _IDLE

    def _read(self) -> None:
        on_read, self.on_read = self.on_read, None
        if on_read is not None:
            on_read()

    def handle_error(
        self,
        request: web.BaseRequest,
        status: int = 500,
        exc: BaseException | None = None,
        message: str | None = None,
    ) -> web.StreamResponse:
        """aiohttp's answer to a request it could not parse (bad header bytes, a body
        that does not match its Content-Encoding): a JSON-RPC error like ours, logged at
        debug level. aiohttp logs each with a traceback, a flood of logs for a client
        that keeps sending junk; a 500 is still a bug worth that."""
        if status >= 500:
            return super().handle_error(request, status, exc, message)
        log.debug("unreadable request from %s: %s", request.remote, printable(message or exc))
        if request.writer.output_size > 0:
            raise ConnectionError("the response had begun; nothing more can be sent")
        if isinstance(exc, ContentEncodingError):
            detail = f"the body does not match its Content-Encoding ({exc.message})"
        else:
            detail = (message or str(exc or "")).strip() or "malformed request"
        response = error_response(status, f"{HTTPStatus(status).phrase}: {detail}")
        response.force_close()
        return response

    async def finish_response(
        self, request: web.BaseRequest, resp: web.StreamResponse, start_time: float | None
    ) -> tuple[web.StreamResponse, bool]:
        answered = await super().finish_response(request, resp, start_time)
        if self._linger_after_answer:
            self._linger()
        return answered

    def _linger(self) -> None:
        """Close a connection whose client is still sending, without a reset: send what
        is queued and a FIN, then drop what still comes for LINGER_SECONDS. Closed at
        once, the client's next bytes are answered with a TCP reset, which can make the
        client lose the answer it has not read yet (RFC 9112, 9.6)."""
        transport = self.transport
        if transport is None or transport.is_closing() or not transport.can_write_eof():
            self.force_close()
            return
        self.transport = None  # so aiohttp does not close it now: the clock below does
        self.force_close()  # aiohttp drops whatever else arrives
        transport.write_eof()
        self._loop.call_later(LINGER_SECONDS, transport.close)

    def log_exception(self, *args: Any, **kwargs: Any) -> None:
        """After a body we could not read has been answered (400), aiohttp reads the rest
        of it, meets the same error and logs it with a traceback: not a fault of ours."""
        if isinstance(kwargs.get("exc_info"), web.RequestPayloadError):
            log.debug("dropped the rest of an unreadable request body")
            return
        super().log_exception(*args, **kwargs)

    # Called by the middleware around every request.
    def request_started(self, request: web.BaseRequest) -> None:
        self._state = _SERVING
        if self.slot is _SLOT:
            self.limits.idle.pop(self, None)
        content = request.content
        if not content.is_eof():
            self._body = content
            self._body_started = self._body_last = self._loop.time()
            self._body_bytes = 0
            self._set_clock(self.limits.body_timeout)

    def request_finished(self) -> None:
        body, self._body = self._body, None
        if body is not None and not body.is_eof():
            # Its bytes still coming are that body's, not the next request's headers.
            self._state, self._unread = _DRAINING, body
        else:
            self._state = _IDLE
        if self.slot is _SLOT:
            self.limits.idle[self] = None  # the most recently used idle connection

    def _body_deadline(self, now: float) -> float:
        """The sooner of: a stall of body_timeout from now, and the time by which the
        bytes so far would have come at body_min_rate after body_timeout's grace."""
        limits = self.limits
        stalled = now + limits.body_timeout
        if not limits.body_min_rate:
            return stalled
        slow = self._body_started + limits.body_timeout + self._body_bytes / limits.body_min_rate
        return min(stalled, slow)

    # One clock for the headers and the body (a connection waits for one at a time). It
    # fires once per timeout at most and re-arms only while still needed.
    def _wait_for_headers(self) -> None:
        self._state = _WAITING
        self._set_clock(self.limits.header_timeout)

    def _set_clock(self, seconds: float) -> None:
        self._deadline = self._loop.time() + seconds
        if self._clock is not None and self._clock.when() > self._deadline:
            self._clock.cancel()  # set for a later deadline (a body's): too late now
            self._clock = None
        if self._clock is None:
            self._clock = self._loop.call_at(self._deadline, self._on_clock)

    def _on_clock(self) -> None:
        self._clock = None
        body = self._body
        waiting = self._state is _WAITING or (body is not None and not body.is_eof())
        if not waiting or self.transport is None:
            return
        if self._loop.time() < self._deadline:
            self._clock = self._loop.call_at(self._deadline, self._on_clock)
        elif body is None:
            log.debug("closing a connection whose request headers are late")
            self.transport.write(self.limits.too_slow)
            self._linger()
        else:
            self._body = None
            limits = self.limits
            # Which deadline passed says why: read from the deadlines themselves, not from
            # the clock, so a body that stalled right at its deadline reads "stalled".
            stalled_at = self._body_last + limits.body_timeout
            if self._body_deadline(self._body_last) < stalled_at:  # still coming, too slowly
                elapsed = self._loop.time() - self._body_started
                message = (
                    f"Request Timeout: the body came at {self._body_bytes / elapsed:.0f} "
                    f"bytes/s, slower than {limits.body_min_rate} bytes/s"
                )
            else:
                message = f"Request Timeout: the body stalled for {limits.body_timeout:g} s"
            self._linger_after_answer = True
            body.set_exception(BodyTimeout(message))


#: Told of each error answer (status 400 or more) the app gives, or aiohttp's
#: HTTPException, after the first middleware: how observation notes refused requests
#: without a middleware of its own (and without a call per successful request).
ResponseWatcher = Callable[[web.Request, web.StreamResponse], None]


class RequestTracker:
    """The first middleware: tells the connection when a request starts and ends (for its
    clocks and the cap), serves a probe-reserve connection nothing but health probes, and
    hands each error answer to `watcher` when one is set."""

    __slots__ = ("watcher",)

    def __init__(self) -> None:
        self.watcher: ResponseWatcher | None = None

    @web.middleware
    async def middleware(self, request: web.Request, handler: Handler) -> web.StreamResponse:
        connection = request.protocol
        if not isinstance(connection, GuardedConnection):  # an in-process test server
            return await self._answer(request, handler)
        connection.request_started(request)
        try:
            if connection.probe_only and not request.path.endswith(OPEN_PATH_SUFFIXES):
                response = error_response(
                    503,
                    f"Too many connections (at most {connection.limits.max_connections}); "
                    "try again later",
                    TRANSPORT_ERROR,
                    headers={"Retry-After": "1"},
                )
                response.force_close()
                return response
            return await self._answer(request, handler)
        finally:
            connection.request_finished()

    async def _answer(self, request: web.Request, handler: Handler) -> web.StreamResponse:
        watcher = self.watcher
        if watcher is None:
            return await handler(request)
        try:
            response = await handler(request)
        except web.HTTPException as error:  # aiohttp's own refusals (a body over the cap)
            watcher(request, error)
            raise
        if response.status >= 400:
            watcher(request, response)
        return response


class GuardedSite(web.BaseSite):
    """aiohttp's TCPSite, making GuardedConnections instead of plain RequestHandlers."""

    __slots__ = ("_host", "_idle_timeout", "_limits", "_port", "_reuse_port")

    def __init__(
        self,
        runner: web.BaseRunner,
        host: str,
        port: int,
        limits: ConnectionLimits,
        idle_timeout: float,
        reuse_port: bool = False,
    ) -> None:
        super().__init__(runner)
        self._reuse_port = reuse_port
        self._host = host
        self._port = port
        self._limits = limits
        self._idle_timeout = idle_timeout

    @property
    def name(self) -> str:
        return f"http://{self._host}:{self.port}"

    @property
    def port(self) -> int:
        """The bound port (the real one when 0 was asked for)."""
        sockets = getattr(self._server, "sockets", None)
        return int(sockets[0].getsockname()[1]) if sockets else self._port

    async def start(self) -> None:
        await super().start()
        loop = asyncio.get_running_loop()
        server = self._runner.server
        assert server is not None
        limits, idle_timeout = self._limits, self._idle_timeout

        def connection() -> GuardedConnection:
            return GuardedConnection(
                server, limits, loop=loop, access_log=None, keepalive_timeout=idle_timeout
            )

        bound = address_socket(self._host, self._port, self._reuse_port)
        if bound is not None:
            self._server = await loop.create_server(connection, sock=bound, backlog=BACKLOG)
            return
        self._server = await loop.create_server(
            connection,
            self._host,
            self._port,
            reuse_address=True,
            reuse_port=self._reuse_port or None,
            backlog=BACKLOG,
        )


def address_socket(host: str, port: int, reuse_port: bool = False) -> socket.socket | None:
    """A socket bound to `host:port` when `host` is an address (127.0.0.1, ::1), set up as
    `create_server` would; None for a name, left to `create_server` to resolve. uvloop
    resolves even an address with getaddrinfo on libuv's thread pool, which starts four
    threads for it: some 4-10 ms before a server's first answer (asyncio does not)."""
    for family in (socket.AF_INET, socket.AF_INET6):
        try:
            socket.inet_pton(family, host)
        except OSError:
            continue
        sock = socket.socket(family, socket.SOCK_STREAM)
        try:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            if reuse_port:
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
            if family == socket.AF_INET6:
                sock.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
            sock.bind((host, port))
        except OSError:
            sock.close()
            raise
        return sock
    return None
