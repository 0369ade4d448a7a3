"""Child: one child server under supervision (starts, restarts, logins, idle stops), its
cached listings (specs/gateway.md, "Supervision") and the connection each front revision
reaches it by. The relay sends the requests; what the child sends goes to its host, with
the connection's in-flight table to tell which call it belongs to."""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import logging
import time
from collections.abc import Callable, Hashable, Sequence
from typing import TYPE_CHECKING, Protocol

from codex_mcp.client.session import RequestHandler
from codex_mcp.codex_compat.client import codex_client_capabilities
from codex_mcp.core.flow import Flow
from codex_mcp.core.inbound import Inbound
from codex_mcp.core.jsonrpc import JsonObject
from codex_mcp.core.provider import ListKind
from codex_mcp.core.session import CLIENT_CAPABILITY_FOR
from codex_mcp.session_logs import context_naming, session_label

from ..config.env import DEFAULT_STARTUP_TIMEOUT, GatewayEnv
from ..config.model import ServerConfig, StdioTarget
from ..config.reload import POLL_SECONDS, file_signature
from ..errors import NEEDS_LOGIN, cannot_run, login_command, one_line
from ..logins import login_file
from .connection import Connection, Handshake, OpenTransport, StartFailed, connect
from .inflight import Callers, InFlight
from .lane import Lane
from .lifetime import Watchdog
from .listing_cache import ListingCache
from .states import Event, State, next_state
from .tools import ToolEntry, prepare_tools

if TYPE_CHECKING:
    from codex_mcp.core.session import ServerSession

log = logging.getLogger("codex_mcp.gateway")

#: Listing kind (also its result's key) -> (method, capability that offers it: also the
#: kind whose list_changed the child sends, and clients hear, when the listing changes).
LISTINGS: dict[str, tuple[str, ListKind]] = {
    "tools": ("tools/list", "tools"),
    "resources": ("resources/list", "resources"),
    "resourceTemplates": ("resources/templates/list", "resources"),
    "prompts": ("prompts/list", "prompts"),
}
#: A child up this long has its backoff reset: its next death is a fresh failure.
_STABLE_SECONDS = 10.0


class ChildHost(Protocol):
    """What a child tells the gateway."""

    #: Paused while the front cannot take more: a stdio child is not read meanwhile.
    flow: Flow

    def child_changed(self, child: Child, kinds: Sequence[ListKind]) -> None:
        """What `child` offers changed (it came up, went down, or listed again): catalogs
        are stale, and clients are told about these `kinds` (none: they never saw it)."""

    def child_connected(self, child: Child, connection: Connection, own: bool) -> None:
        """A new connection to `child` (or its session re-established), before any front
        request can reach it: the host may hold it (`Connection.gate`) until it has looked at
        it. `own`: the child lists its tools on it (else a second connection, its lane)."""

    def child_notification(
        self, child: Child, method: str, params: JsonObject, origin: Hashable, inflight: InFlight
    ) -> None:
        """A notification to relay (logging, resources/updated, progress, a task's status);
        `origin` is the id of our request whose stream carried it (HTTP), else None;
        `inflight`, the table of the connection it came by."""

    async def child_request(
        self, child: Child, method: str, params: JsonObject, origin: Hashable, inflight: InFlight
    ) -> JsonObject:
        """A request from the child to the client (sampling, elicitation, roots)."""

    def sole_session(self) -> ServerSession | None:
        """The one client session the host serves for its whole life (stdio), if so."""


class Owner(Protocol):
    """Whose child it is when it serves one client alone (routing/sessions.py makes them):
    its client session (None for a 2026-07-28 principal), how logs name it, and whether it
    can be sent notifications and requests outside a call."""

    @property
    def session(self) -> ServerSession | None: ...
    @property
    def label(self) -> str: ...
    @property
    def reachable(self) -> bool: ...


class Child:
    def __init__(
        self,
        server: ServerConfig,
        *,
        host: ChildHost,
        env: GatewayEnv,
        watchdog: Watchdog,
        owner: Owner | None = None,
        capabilities: JsonObject | None = None,
        cache: ListingCache | None = None,
        open_transport: OpenTransport | None = None,
        outer_uri: Callable[[str], str] | None = None,
    ) -> None:
        self.server = server
        #: How it is first spoken to: `server/discover` first when every front it serves
        #: speaks 2026-07-28 (a principal's own child has no session: its callers are all
        #: 2026-07-28 requests), else `initialize` first (connection_for).
        self.handshake: Handshake = (
            "discover" if owner is not None and owner.session is None else "initialize"
        )
        self.name = server.name
        #: Its second connection, for its 2026-07-28 fronts when it was greeted with
        #: `initialize` (lane.py).
        self.lane = Lane(self.name, lambda: self._connect("discover-only"))
        self.host = host
        self.env = env
        self.watchdog = watchdog
        #: The session or principal this child serves alone (per-session children), else
        #: None (shared).
        self.owner = owner
        #: Who has sent it requests, and what it sent that no call claimed (the relay's
        #: attribution.py writes it).
        self.callers = Callers()
        #: Its tools and skills not served because they changed since they were trusted
        #: (or are new where nothing new is): (kind, its own name) -> why (specs/trust.md).
        self.withheld: dict[tuple[str, str], str] = {}
        #: What we declare to the child: the front client's capabilities for a per-session
        #: child; for a shared one, what its entry says, else what Codex 0.171 declares.
        if capabilities is None:
            capabilities = server.client_capabilities
        if capabilities is None:
            capabilities = codex_client_capabilities()
        self.client_capabilities = capabilities
        self.state: State = "idle"
        self.connection: Connection | None = None
        self.restarts = 0
        #: The normalized error of its last failure (its message: last_error).
        self.last_error_data: JsonObject | None = None
        self.up_since: float | None = None
        self.tools: list[ToolEntry] = []
        #: Its tools that run only as 2025-11-25 tasks (the gateway follows their task for
        #: a front that calls them plainly), by the listing served (current_tools).
        self.task_required: frozenset[str] = frozenset()
        self.cache = cache
        self._open_transport = open_transport
        #: The last good tool listing kept on disk (raw, and prepared): served while the
        #: child has not listed yet in this gateway (it starts, or is not started yet).
        kept = cache.load(server, capabilities) if cache is not None else None
        self._cached_raw = kept.tools if kept is not None else None
        self.cached_tools = prepare_tools(server, self._cached_raw or [])
        #: What it declared when it was last up (or when its kept listing was made).
        self.last_offer = self._saved_offer = kept.capabilities if kept is not None else None
        #: Has it been up since the gateway started?
        self.was_up = False
        #: The child's resource URI as the fronts know it (relay/calls.py rewrites the links
        #: in its tool results with it); None when URIs pass unchanged (passthrough).
        self.outer_uri = outer_uri
        self.lists: dict[str, list[JsonObject] | None] = dict.fromkeys(LISTINGS)
        self.startup_timeout = server.startup_timeout_sec or DEFAULT_STARTUP_TIMEOUT
        self.list_timeout = server.tools_list_timeout_sec or env.tools_list_timeout
        self.call_timeout = server.tool_timeout_sec
        self.is_stdio = isinstance(server.target, StdioTarget)
        self._fetches: dict[str, asyncio.Task[None]] = {}
        self._stale: set[str] = set()
        self._missed: set[str] = set()
        self._up = asyncio.Event()
        #: Set when a start attempt ends, up or not (a call waiting for it stops waiting).
        self._attempt_over = asyncio.Event()
        self._settled = asyncio.Event()
        #: The token store file a login for it writes, and how it looked before the start
        #: attempt that found no login (it is tried again once that changes).
        self._login_file = login_file(server)
        self._login_seen: tuple[int, int, int] | None = None
        self._login_wake = asyncio.Event()
        #: Set when a call found its login gone while it was up (login_lost).
        self._login_lost: JsonObject | None = None
        self._closed: asyncio.Future[Exception] | None = None
        self._supervisor: asyncio.Task[None] | None = None
        self._stopping = False
        #: Stopped for want of use (`idle_timeout_sec`): back to idle, listing kept.
        self._dozing = False
        #: A call came while it was being stopped so: started again once it is down.
        self._wake = False
        self._served_tools(self.cached_tools)

    # -- lifetime --------------------------------------------------------------
    def start(self) -> None:
        if self._stopping:
            return
        if self.state == NEEDS_LOGIN:
            self.look_for_login()  # a call: the user may have just logged in
            return
        if self._dozing:
            # A call came while it stops for want of use: it is started again as soon as
            # it is down, and the call waits for that (wait_up) instead of failing.
            self._wake = True
            self._starting()
            return
        if self._supervisor is None:
            self._starting()
            self._supervisor = asyncio.get_running_loop().create_task(
                self._supervise(), context=self._log_context()
            )
            if self.cached_tools:  # served from now on: catalogs built without it are stale
                self.host.child_changed(self, [])

    def _go(self, event: Event) -> None:
        self.state = next_state(self.state, event)

    def _starting(self) -> None:
        self._go("start")
        self._attempt_over.clear()

    def look_for_login(self, *, anyway: bool = False) -> None:
        """A child waiting for a login is started again now when the token store's entry
        for it changed (a call came), or `anyway` (SIGHUP); the caller may wait_up."""
        if self.state == NEEDS_LOGIN and (anyway or self._login_signature() != self._login_seen):
            self._starting()
            self._login_wake.set()

    def login_lost(self, error: JsonObject) -> None:
        """A call found that the server wants a login again (revoked, refresh refused)."""
        if self.connection is None or self._closed is None or self._closed.done():
            return
        self._login_lost = error
        self._closed.set_result(ConnectionError("its login is gone"))

    def _login_signature(self) -> tuple[int, int, int] | None:
        return file_signature(self._login_file) if self._login_file is not None else None

    async def _wait_for_login(self) -> None:
        """Until the token store's entry for it changes, or a call or SIGHUP says to look now."""
        self._login_wake.clear()
        while not self._login_wake.is_set():
            if self._login_signature() != self._login_seen:
                return
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(POLL_SECONDS):
                    await self._login_wake.wait()

    def _log_context(self) -> contextvars.Context:
        """The context of the child's own tasks (its supervisor, which starts its process
        and reads its stderr, and its listings): a per-session child's lines name its
        session; a shared child's name none, whichever session's request started it."""
        session = self.owner.session if self.owner is not None else None
        session_id = session.session_id if session is not None else None
        return context_naming(session_label(session_id) if session_id else None)

    async def stop(self) -> None:
        self._stopping = True
        if self._supervisor is not None:
            self._supervisor.cancel()
        for task in list(self._fetches.values()):
            task.cancel()
        connection, self.connection = self.connection, None
        if connection is not None:
            await connection.close()
        await self.lane.close()
        if self._supervisor is not None:
            await asyncio.gather(self._supervisor, return_exceptions=True)
        self._go("stop")
        self._settled.set()

    @property
    def dormant(self) -> bool:
        """Not started, by choice: `lazy` and not needed yet, or stopped for want of use."""
        return self.state == "idle" and (self.server.lazy or self.was_up)

    async def _watch_idle(self, limit: float) -> None:
        """Stop the child once it has had no call for `limit` seconds (its listing stays
        served, and the next call starts it again)."""
        loop = asyncio.get_running_loop()
        seen, quiet_since = self._activity, loop.time()
        while True:
            await asyncio.sleep(max(limit / 4, 0.05))
            now = loop.time()
            if self._activity != seen or any(t.busy for t in self._inflight):
                seen, quiet_since = self._activity, now
            elif now - quiet_since >= limit:
                break
        log.info("%s: no call for %g s; stopped until the next one", self.name, limit)
        self._dozing = True
        # From now on no call goes to the connection being closed: a call finds none, and
        # waits for the next start (start, wait_up).
        self.connection = None
        self._up.clear()
        if self._closed is not None and not self._closed.done():
            self._closed.set_result(ConnectionError("idle"))

    @property
    def _inflight(self) -> list[InFlight]:
        """The in-flight tables of its connections (its own, and its lane's)."""
        return [c.session.inflight for c in (self.connection, self.lane.connection) if c]

    @property
    def _activity(self) -> int:
        return sum(table.activity for table in self._inflight)

    @property
    def in_flight(self) -> bool:
        """Requests of ours are waiting for its answers."""
        return any(table.calls for table in self._inflight)

    async def wait_settled(self, timeout: float) -> None:
        """Until the first start attempt ended (up or failed), at most `timeout` seconds."""
        if not self._settled.is_set():
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(timeout):
                    await self._settled.wait()

    async def wait_up(self, timeout: float) -> bool:
        """Up now, or once the start in progress is (False as soon as it fails)."""
        if self.state == "starting" and not self._up.is_set():
            try:
                async with asyncio.timeout(timeout):
                    await self._attempt_over.wait()
            except TimeoutError:
                return False
        return self.state == "ready"

    async def _supervise(self) -> None:
        attempt = 0
        policy = self.server.restart
        while not self._stopping:
            self._starting()
            self._login_seen = self._login_signature()  # a login from now on is news
            try:
                connection = await self._connect()
            except StartFailed as failure:
                self._failed(failure.error)
                if self.state == NEEDS_LOGIN:  # no backoff, no restart: until a login
                    await self._wait_for_login()
                    continue
                if self.cannot_run is not None:  # trying again changes nothing: the user must
                    log.warning("%s: not restarted: its command is %s", self.name, self.cannot_run)
                    return
                exit_code: int | None = None
            else:
                exit_code = await self._serve(connection)
                if time.monotonic() - (self.up_since or 0) > _STABLE_SECONDS:
                    attempt = 0
                self.up_since = None
            if self._stopping:
                return
            lost, self._login_lost = self._login_lost, None
            if lost is not None:  # the store as the refused refresh left it: wait for news
                self._login_seen = self._login_signature()
                self._failed(lost)
                await self._wait_for_login()
                continue
            if self._dozing:  # idle: the next call starts it again
                self._dozing = False
                if self._wake:  # one came while it stopped: at once, not as a failure
                    self._wake = False
                    continue
                self._go("doze")
                self._supervisor = None
                self.host.child_changed(self, [])
                return
            give_up = (
                policy.policy == "never"
                or (policy.policy == "on-failure" and exit_code == 0)
                or (policy.max_restarts is not None and self.restarts >= policy.max_restarts)
            )
            if give_up:
                self._go("give up")
                log.warning("%s: not restarted (restart policy %r)", self.name, policy.policy)
                return
            delay = min(policy.backoff_initial_sec * 2**attempt, policy.backoff_max_sec)
            attempt += 1
            self._go("retry")
            level = logging.WARNING if attempt == 1 else logging.DEBUG
            log.log(level, "%s: restarting in %.1f s", self.name, delay)
            await asyncio.sleep(delay)
            self.restarts += 1

    async def _connect(self, lane: Handshake | None = None) -> Connection:
        """A connection to the child: its own (whose end `_closed` tells), or with `lane`,
        its lane, greeted as `lane` says."""
        closed: asyncio.Future[Exception] = asyncio.get_running_loop().create_future()

        def on_closed(exc: Exception) -> None:
            if lane is not None:
                self.lane.closed()
            elif not closed.done():
                closed.set_result(exc)

        if lane is None:
            self._closed = closed
        connection = await connect(
            self.server,
            watchdog=self.watchdog,
            on_notification=self._on_notification,
            on_closed=on_closed,
            handlers=self._request_handlers(),
            capabilities=self.client_capabilities,
            timeout=self.startup_timeout,
            max_message_bytes=self.env.max_message_bytes,
            open_transport=self._open_transport,
            read_gate=self.host.flow.writable,
            handshake=lane or self.handshake,
        )
        session = connection.session
        session.before_resend = connection.admitted
        own = lane is None
        session.on_reinitialized = lambda _result: self._reinitialized(connection, own)
        self.host.child_connected(self, connection, own)
        return connection

    def _reinitialized(self, connection: Connection, own: bool) -> None:
        """Its HTTP session expired and the client began a new one: perhaps with another
        process of the server, so (on its own connection) its listings are made again, and
        the host is told."""
        if own:
            if self.connection is not connection:
                return
            for kind, items in self.lists.items():
                if items is not None:
                    self._missed.add(kind)  # clients listed it: tell them when it is in again
                self.lists[kind] = None
        self.host.child_connected(self, connection, own)
        if own:
            for kind in LISTINGS:
                self._fetch(kind)

    def _request_handlers(self) -> dict[str, RequestHandler]:
        """The child's requests to its client (sampling, elicitation, roots) go to the host,
        with the front request they belong to when that is known."""

        async def ask_host(params: JsonObject, ctx: Inbound) -> JsonObject:
            inflight = ctx.peer.inflight  # type: ignore[attr-defined]  # a ChildSession
            return await self.host.child_request(
                self, ctx.method, params, ctx.related_request_id, inflight
            )

        return dict.fromkeys(CLIENT_CAPABILITY_FOR, ask_host)

    def _failed(self, error: JsonObject) -> None:
        again = error["message"] == self.last_error
        self.last_error_data = error
        login = login_command(error)
        self._go("login needed" if login is not None else "failed")
        self._attempt_over.set()
        self._settled.set()
        if self.cached_tools:  # it cannot serve them: they leave the catalog
            self.cached_tools = []
            self.host.child_changed(self, ["tools"])
        level = logging.DEBUG if again else logging.WARNING  # the same failure: said already
        if login is not None:
            log.log(
                level,
                "%s: needs login: run `%s`; it starts once you have (the gateway watches the "
                "token store; SIGHUP looks at once)",
                self.name,
                one_line(login),
            )
        else:
            log.log(level, "%s: could not start: %s", self.name, error["message"])

    @property
    def cannot_run(self) -> str | None:
        """ "not found" or "not executable" when its command cannot run at all (it is then
        not restarted: a config change, or SIGHUP, starts it again), else None."""
        return cannot_run(self.last_error_data) if self.state == "failed" else None

    @property
    def last_error(self) -> str | None:
        return self.last_error_data["message"] if self.last_error_data is not None else None

    async def _serve(self, connection: Connection) -> int | None:
        """Up until it dies (or we stop it); returns its exit code when known."""
        self.connection = connection
        self.last_offer = connection.capabilities
        self._go("up")
        self.was_up = True
        self.up_since = time.monotonic()
        self._up.set()
        self._attempt_over.set()
        self._settled.set()
        log.debug("%s: up (pid %s)", self.name, connection.pid or "-")
        for kind in LISTINGS:
            self._fetch(kind)
        self.host.child_changed(self, self._offered())
        idle = self.server.idle_timeout_sec
        watch = asyncio.get_running_loop().create_task(self._watch_idle(idle)) if idle else None
        assert self._closed is not None
        try:
            death = await self._closed
        finally:
            if watch is not None:
                watch.cancel()
        self._up.clear()
        self.connection = None
        for task in list(self._fetches.values()):
            task.cancel()
        await self.lane.close()
        if self._stopping:
            return None
        # Still running when its connection broke: we cut it (or it closed its stdout).
        # Its exit on the stdin EOF we then send is no clean exit: `on-failure` restarts it.
        cut = connection.returncode is None
        await connection.close()
        if self._login_lost is not None:  # not a death: _supervise waits for a login
            offered = self._offered(connection)
            self._forget_listings()
            self.host.child_changed(self, offered)
            return None
        if self._dozing:  # its listing stays served while it is stopped
            tools = self.current_tools
            self._forget_listings()
            self._missed.clear()
            self.cached_tools = tools
            return None
        code = None if cut else connection.returncode
        detail = one_line(str(death), 400)
        stopped = {"message": f"the server stopped: {detail}", "data": {"kind": "server_error"}}
        self.last_error_data = stopped
        log.warning("%s: %s", self.name, detail)
        offered = self._offered(connection)
        self._forget_listings()
        self.host.child_changed(self, offered)
        return code

    def _forget_listings(self) -> None:
        for kind, items in self.lists.items():
            if items:
                self._missed.add(kind)  # listed before: tell clients when it is back
            self.lists[kind] = None
        self.tools = []
        self.cached_tools = []

    # -- listings --------------------------------------------------------------
    @property
    def current_tools(self) -> list[ToolEntry]:
        """Its tools as served now: its own listing, or until it has listed, the cached one."""
        return self.tools if self.lists["tools"] is not None else self.cached_tools

    def offers(self, kind: str, connection: Connection | None = None) -> bool:
        connection = connection or self.connection
        if connection is None:
            return False
        return kind == "tools" or LISTINGS[kind][1] in connection.capabilities

    def _offered(self, connection: Connection | None = None) -> list[ListKind]:
        kinds: list[ListKind] = ["tools", "resources", "prompts"]
        return [kind for kind in kinds if self.offers(kind, connection)]

    @property
    def busy(self) -> bool:
        """A call, its start or a listing in flight: whoever waits on it is not idle."""
        return self.in_flight or self.state == "starting" or bool(self._fetches)

    async def listing(
        self, kind: str, timeout: float | None = None, *, live: bool = False
    ) -> list[JsonObject] | None:
        """The child's current `kind` listing, or None when it is not up, or not listed
        within `timeout` (default: its tools/list timeout); then the listing keeps going,
        and clients are told when it arrives. Until the child has listed, its kept tool
        listing is the answer, unless `live` (a call to a tool the kept one lacks): then
        the child's own, waited for."""
        timeout = self.list_timeout if timeout is None else timeout
        deadline = asyncio.get_running_loop().time() + timeout
        if kind == "tools" and self.lists[kind] is None and self.cached_tools and not live:
            return self._cached_raw  # the live listing replaces it when it comes
        if not await self.wait_up(timeout):
            return None
        items = self.lists[kind]
        if items is not None:
            return items
        task = self._fetch(kind)
        if task is not None:
            try:
                async with asyncio.timeout_at(deadline):
                    await asyncio.shield(task)
            except TimeoutError:
                self._missed.add(kind)
                log.warning(
                    "%s: %s not listed within %.1f s; skipped (its tools_list_timeout_sec, "
                    "or WRAPPER_TOOLS_LIST_TIMEOUT_MS, sets how long to wait)",
                    self.name, kind, timeout,
                )  # fmt: skip
                return None
            except asyncio.CancelledError:
                current = asyncio.current_task()
                if not task.cancelled() or (current is not None and current.cancelling()):
                    raise
                return None  # the child was stopped meanwhile (a reload, an idle stop)
        return self.lists[kind]

    def _fetch(self, kind: str) -> asyncio.Task[None] | None:
        if not self.offers(kind):
            self.lists[kind] = []
            return None
        running = self._fetches.get(kind)
        if running is not None:
            self._stale.add(kind)  # changed again while listing: list once more after
            return running
        task = asyncio.get_running_loop().create_task(self._list(kind), context=self._log_context())
        self._fetches[kind] = task
        task.add_done_callback(lambda _t: self._fetches.pop(kind, None))
        return task

    async def _list(self, kind: str) -> None:
        connection = self.connection
        if connection is None:
            return
        method, _ = LISTINGS[kind]
        timeout = max(self.startup_timeout, self.list_timeout)
        good = True
        while True:
            self._stale.discard(kind)
            try:
                items = await connection.list_all(method, kind, timeout)
            except Exception as exc:  # not CancelledError, a BaseException
                log.warning("%s: %s failed: %s", self.name, method, one_line(exc))
                items, good = [], False
            if kind not in self._stale:
                break
        if self.connection is not connection:
            return
        known = self.lists[kind] is not None
        self.lists[kind] = items
        # Clients that were served the cached listing hear when the child's differs.
        replaced = False
        if kind == "tools":
            self.tools = prepare_tools(self.server, items)
            self._served_tools(self.tools)
            replaced = bool(self.cached_tools) and self.cached_tools != self.tools
            if good:
                offered = connection.capabilities
                kept_changed = items != self._cached_raw or offered != self._saved_offer
                if self.cache is not None and kept_changed:
                    self.cache.save(self.server, self.client_capabilities, items, offered)
                    self._saved_offer = offered
                self._cached_raw, self.cached_tools = items, self.tools
        # Catalogs are rebuilt either way; clients hear of it when they saw the old listing
        # (or listed without it).
        tell = known or replaced or kind in self._missed
        self._missed.discard(kind)
        self.host.child_changed(self, [LISTINGS[kind][1]] if tell else [])

    def _served_tools(self, tools: list[ToolEntry]) -> None:
        self.task_required = frozenset(
            entry.name for entry in tools if task_support(entry.definition) == "required"
        )

    # -- what the child sends ---------------------------------------------------
    def _on_notification(
        self, method: str, params: JsonObject, origin: Hashable, inflight: InFlight
    ) -> None:
        if method.endswith("/list_changed"):
            for kind, (_, offer) in LISTINGS.items():
                if method != f"notifications/{offer}/list_changed":
                    continue
                if self.lists[kind] is not None:
                    self._missed.add(kind)  # clients listed it: tell them it changed
                self._fetch(kind)
        elif method in _RELAYED:
            self.host.child_notification(self, method, params, origin, inflight)
        elif method != "notifications/cancelled":
            log.debug("%s: notification %s ignored", self.name, method)

    # -- its revision for each front ----------------------------------------------
    @property
    def may_open_lane(self) -> bool:
        """Might a 2026-07-28 front be served in 2026-07-28 over its lane (it was greeted
        with `initialize`, and is not known to refuse it)?"""
        if self.lane.speaks is False or self.handshake != "initialize":
            return False
        connection = self.connection
        return connection is None or connection.session.stateless is None

    async def connection_for(self, modern: bool) -> Connection | None:
        """Where a front request goes (the child started now if it is down; None when it
        does not come up in time): its connection, or for a 2026-07-28 (`modern`) front
        that `may_open_lane`, its lane."""
        if self.connection is None:
            self.start()
            if not await self.wait_up(self.startup_timeout):
                return None
        connection = self.connection
        if connection is None or not modern or not self.may_open_lane:
            return connection
        return await self.lane.open(connection, lambda: self.connection)


#: What the child sends that its host relays (a task's progress outlives its call).
_RELAYED = frozenset(
    {
        "notifications/message",
        "notifications/resources/updated",
        "notifications/tasks/status",
        "notifications/progress",
    }
)


def declares_tasks(capabilities: JsonObject) -> bool:
    """Does a child's `initialize` declare task-augmented tools/call (2025-11-25)?"""
    tasks = capabilities.get("tasks")
    requests = tasks.get("requests") if isinstance(tasks, dict) else None
    tools = requests.get("tools") if isinstance(requests, dict) else None
    return isinstance(tools, dict) and isinstance(tools.get("call"), dict)


def task_support(definition: JsonObject | None) -> object:
    """A tool's `execution.taskSupport` ("required", "optional", "forbidden"), if any."""
    execution = definition.get("execution") if definition is not None else None
    return execution.get("taskSupport") if isinstance(execution, dict) else None
