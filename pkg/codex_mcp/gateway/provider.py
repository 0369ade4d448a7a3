"""GatewayProvider: the children of a `.mcp.json`, served through the core as one provider
(specs/gateway.md, "Serving")."""

from __future__ import annotations

import asyncio
import functools
import gc
import logging
import sys
import weakref
from collections.abc import Awaitable, Callable, Hashable, Sequence
from typing import TYPE_CHECKING, Any

from codex_mcp.core.context import RequestContext
from codex_mcp.core.errors import McpError
from codex_mcp.core.flow import Flow
from codex_mcp.core.jsonrpc import INTERNAL_ERROR, JsonObject
from codex_mcp.core.log_levels import LOG_LEVELS
from codex_mcp.core.provider import (
    ListKind,
    Provider,
    ResourceNotFound,
    UnknownPrompt,
    UnknownTool,
)
from codex_mcp.core.ready import Ready

from ..codex_compat.client import RELAYED_CAPABILITIES, everything_relayed
from ..observe.hooks import RelayHooks
from .children.child import Child
from .children.connection import Connection, OpenTransport
from .children.inflight import InFlight
from .children.lifetime import Watchdog
from .children.listing_cache import ListingCache
from .config.env import STARTUP_BUDGET_ENV, GatewayEnv
from .config.model import GatewayConfig, ServerConfig
from .config.reload import ConfigWatcher
from .errors import NEEDS_LOGIN
from .relay import attribution
from .relay import calls as relay
from .relay import skills as relay_skills
from .relay.front import FrontCall, check_client_can, front_of
from .relay.front_tasks import TASK_STATUS, FrontTasks
from .relay.subscriptions import ResourceSubscriptions
from .routing.catalog import Catalog, build_catalog, outer_uri
from .routing.naming import SEPARATOR
from .routing.sessions import Owner, SessionChildren
from .status import STATUS_TOOL, status_result, status_tool, summary_line

if TYPE_CHECKING:
    from codex_mcp.core.session import ServerSession
    from codex_mcp.core.subscriptions import Subscription

log = logging.getLogger("codex_mcp.gateway")

#: How long a child a reload replaced may take to answer the calls it has in flight.
RETIRE_GRACE_SECONDS = 10.0
_RETIRE_POLL_SECONDS = 0.05
#: How many reloads in a row a call waiting for a listing follows to the new children.
_RELOADS_OUTWAITED = 3


class GatewayProvider(Provider, RelayHooks):
    def __init__(
        self,
        config: GatewayConfig,
        env: GatewayEnv | None = None,
        *,
        open_transport: OpenTransport | None = None,
    ) -> None:
        super().__init__()
        #: How children are reached instead of what their entries say (tests: in memory).
        self.open_transport = open_transport
        #: Told when the configuration is replaced (a reload): the policy point rebinds.
        self.config_listeners: list[Callable[[], None]] = []
        #: Told when what a child offers changes: pinning judges the catalog again.
        self.change_listeners: list[Callable[[], None]] = []
        #: Told of each new connection to a child before a front request can reach it
        #: (ChildHost.child_connected): pinning holds it until its tools are judged.
        self.connect_listeners: list[Callable[[Child, Connection, bool], None]] = []
        self._config = config
        self.env = env or GatewayEnv.read()
        self.passthrough = config.passthrough
        self.watchdog = Watchdog()
        self.cache = ListingCache(self.env.cache_dir)
        #: Until then, a listing waits for children in their first start (STARTUP_BUDGET_ENV).
        self._budget_end = 0.0
        #: The front's flow (the core's, set by build_core): stdio children are read no
        #: faster than a stdio front takes what they send.
        self.flow = Flow()
        servers = config.enabled_servers
        self.shared = [self.make_child(s) for s in servers if not s.per_session]
        self.per_session = SessionChildren(self, [s for s in servers if s.per_session])
        self._order = {server.name: index for index, server in enumerate(servers)}
        self._sessions: weakref.WeakSet[ServerSession] = weakref.WeakSet()
        #: The first client session, and how many were ever opened (sole_session).
        self._first_session: weakref.ref[ServerSession] | None = None
        self._opened = 0
        #: Bumped whenever a child's offer changes anywhere; catalogs are rebuilt on sight
        #: (the shared one, kept while no per-session server is served, is dropped then).
        self.generation = 0
        self._catalog: Catalog | None = None
        self._warned: set[str] = set()
        self._shared_log_level: str | None = None
        self._background: set[asyncio.Task[Any]] = set()
        self._watcher: ConfigWatcher | None = None
        #: Children a reload replaced or removed, finishing their calls in flight.
        self._retiring: set[Child] = set()
        #: The 2025-11-25 tasks children make for front sessions (serve.py installs them).
        self.front_tasks = FrontTasks(self)
        #: Front subscriptions to children's resources (legacy subscribe, 2026-07-28 listen).
        self.subscriptions = ResourceSubscriptions(self.spawn)

    @property
    def config(self) -> GatewayConfig:
        return self._config

    @config.setter
    def config(self, config: GatewayConfig) -> None:
        self._config = config
        for listener in self.config_listeners:
            listener()

    def make_child(self, server: ServerConfig, owner: Owner | None = None) -> Child:
        capabilities = None
        if owner is not None and owner.session is not None and owner.session.protocol_version:
            # a child of one client asks that client only what it can answer (a 2026-07-28
            # front over stdio never initialized: it declares per request, and its child is
            # told what a 2026-07-28 principal's is, the entry's client_capabilities)
            declared = owner.session.client_capabilities
            capabilities = {k: v for k, v in declared.items() if k in RELAYED_CAPABILITIES}
        elif self.passthrough and server.client_capabilities is None:
            capabilities = everything_relayed()  # a wrapper hides nothing its client may have
        return Child(
            server,
            host=self,
            env=self.env,
            watchdog=self.watchdog,
            owner=owner,
            capabilities=capabilities,
            cache=self.cache,
            open_transport=self.open_transport,
            outer_uri=None if self.passthrough else functools.partial(outer_uri, server.name),
        )

    # -- lifetime --------------------------------------------------------------
    @property
    def features(self) -> frozenset[str]:
        """What the children offer: as each that is up declares, and each not up yet (or
        waiting for a login) declared when it was last up, in this gateway or the one that
        kept its listing; one never seen, or a per-session one, may offer anything."""
        optional = ("resources", "prompts", "completions")
        offers = []
        for child in self.shared:
            offer = child.connection.capabilities if child.connection is not None else None
            if offer is None and child.state in ("idle", "starting", NEEDS_LOGIN):
                offer = child.last_offer
                if offer is None or self.per_session.servers:
                    return frozenset(("tools", *optional, *relay_skills.ALL_FEATURES))
            if offer is not None:
                offers.append(offer)
        if self.per_session.servers:
            return frozenset(("tools", *optional, *relay_skills.ALL_FEATURES))
        offered = (k for k in optional if any(k in offer for offer in offers))
        return frozenset(("tools", *offered, *relay_skills.features(offers)))

    async def start(self) -> None:
        # What exists now (modules, config, the client's classes) lives as long as we do:
        # keep it out of the collector's way (a full collection walked all of it, 13% of the
        # instructions of a relayed call).
        gc.freeze()
        self._budget_end = asyncio.get_running_loop().time() + self.env.startup_budget
        for child in self.shared:
            if not child.server.lazy:
                child.start()
        if self.config.path is not None and not self.passthrough:
            self._watcher = ConfigWatcher(self.config.path, self.reconfigure)
            self._watcher.start()
        if self.env.summary:
            self.spawn(self._announce())

    async def _announce(self) -> None:
        """The TypeScript wrapper's one line on stderr, once the first starts are over."""
        started = self._started_with_us
        await asyncio.gather(*(c.wait_settled(c.startup_timeout + 1) for c in started))
        names = [server.name for server in self.per_session.servers]
        lazy = [child.name for child in self.shared if child.server.lazy]
        print(summary_line(started, names, lazy), file=sys.stderr, flush=True)

    @property
    def _started_with_us(self) -> list[Child]:
        return [child for child in self.shared if not child.server.lazy]

    async def wait_started(self, timeout: float) -> None:
        """Until every shared child's first start ended, at most `timeout` seconds."""
        await asyncio.gather(*(child.wait_settled(timeout) for child in self._started_with_us))

    @property
    def settled(self) -> bool:
        return all(child.state not in ("idle", "starting") for child in self._started_with_us)

    def reconfigure(self, config: GatewayConfig) -> None:
        """Serve `config` from now on (specs/gateway.md, "Supervision": Hot reload)."""
        servers = config.enabled_servers
        if servers == self.config.enabled_servers:
            if config == self.config:
                log.debug("config unchanged; nothing reloaded")
            else:
                self.config = config  # only what no child or listing depends on (warnings...)
                self.per_session.reconfigure(config, [s for s in servers if s.per_session])
                log.info("config reread: no server changed")
            self._start_given_up()
            return
        old = {child.name: child for child in self.shared}
        shared: list[Child] = []
        started: list[Child] = []
        restarted: list[str] = []
        for server in servers:
            if server.per_session:
                continue
            child = old.pop(server.name, None)
            if child is not None and child.server == server and child.state != "failed":
                shared.append(child)
                continue
            if child is not None:
                restarted.append(server.name)
                self.spawn(self._retire(child))
            fresh = self.make_child(server)
            shared.append(fresh)
            started.append(fresh)
        for child in old.values():
            self.spawn(self._retire(child))
        self.config = config
        self.shared = shared
        self.per_session.reconfigure(config, [server for server in servers if server.per_session])
        self._order = {server.name: index for index, server in enumerate(servers)}
        for child in started:
            if not child.server.lazy:
                child.start()
        log.warning(
            "config reloaded: %d restarted (%s), %d stopped (%s), %d started (%s)",
            len(restarted), ", ".join(restarted) or "-",
            len(old), ", ".join(old) or "-",
            len(started) - len(restarted),
            ", ".join(c.name for c in started if c.name not in restarted) or "-",
        )  # fmt: skip
        self._changed()
        for kind in ("tools", "resources", "prompts"):
            self.notify_list_changed(kind)

    def _start_given_up(self) -> None:
        """A reload, SIGHUP included, starts afresh each shared child that gave up, and one
        waiting for a login looks for it at once: the user may have fixed that."""
        for index, child in enumerate(self.shared):
            child.look_for_login(anyway=True)
            if child.state != "failed":
                continue
            fresh = self.shared[index] = self.make_child(child.server)
            self.spawn(self._retire(child))
            self._changed()
            if not fresh.server.lazy:
                fresh.start()
            log.warning("%s: started again (it had given up)", fresh.name)

    async def _retire(self, child: Child) -> None:
        """Stop a child a reload replaced or removed once its calls in flight are answered."""
        self._retiring.add(child)
        try:
            loop = asyncio.get_running_loop()
            deadline = loop.time() + RETIRE_GRACE_SECONDS
            # Polled: the in-flight table is the relay's hot-path dict, and a signal on its
            # emptying would cost every relayed call; a reload is rare.
            while child.in_flight and loop.time() < deadline:  # noqa: ASYNC110
                await asyncio.sleep(_RETIRE_POLL_SECONDS)
            await child.stop()
        finally:
            self._retiring.discard(child)

    async def stop(self) -> None:
        retiring = list(self._retiring)  # their tasks are cancelled next: stopped here
        if self._watcher is not None:
            self._watcher.stop()
        # First: the summary waiting for the first starts would take the stopping children
        # for children that never started.
        for task in list(self._background):
            task.cancel()
        await self.per_session.stop_all()
        await asyncio.gather(*(c.stop() for c in [*self.shared, *retiring]), return_exceptions=True)
        self.watchdog.close()

    def open_session(self, session: ServerSession) -> None:
        self._sessions.add(session)
        self._opened += 1
        if self._first_session is None:
            self._first_session = weakref.ref(session)

    def sole_session(self) -> ServerSession | None:
        """The only client session this gateway ever had, when it has no id (stdio, or in
        memory): HTTP sessions come and go, and a message no call claims may be another's."""
        session = self._first_session() if self._first_session is not None else None
        if self._opened != 1 or session is None or session.closed or session.session_id:
            return None
        return session

    async def close_session(self, session: ServerSession) -> None:
        self._sessions.discard(session)

    # -- the catalog -------------------------------------------------------------
    def children(self, session: ServerSession, *, start: bool = True) -> list[Child]:
        """This session's children in config order (with `start`, its per-session ones are
        started now if they are not yet)."""
        if not self.per_session.servers:
            return self.shared
        mine = self.per_session.children(session, start=start)
        return sorted([*self.shared, *mine], key=lambda child: self._order[child.name])

    def catalog(self, session: ServerSession) -> Catalog:
        if not self.per_session.servers:
            if self._catalog is None:
                self._catalog = self._build(self.shared)
            return self._catalog
        owner = self.per_session.owner(session)
        if owner is None:  # a closed session: what is shared
            return self._build(self.children(session))
        cached = owner.catalog
        if cached is not None and cached[0] == self.generation:
            return cached[1]
        catalog = self._build(self.children(session))
        owner.catalog = (self.generation, catalog)
        return catalog

    def _build(self, children: Sequence[Child]) -> Catalog:
        catalog = build_catalog(children, passthrough=self.passthrough, reserved=(STATUS_TOOL,))
        catalog.tools.append(status_tool())
        for warning in catalog.warnings:
            if warning not in self._warned:
                self._warned.add(warning)
                log.warning("%s", warning)
        return catalog

    async def _listed(self, kind: str, ctx: RequestContext, *, live: bool = False) -> Catalog:
        """The catalog once every child listed `kind` (or was skipped as too slow); `live`:
        from the children's own listings, not the kept ones (see Child.listing)."""
        children = self.children(ctx.session)
        if all(child.lists[kind] is not None for child in children):
            # Each has its own listing (so each is up): nothing to wait for, and nothing to
            # run per call (the core looks a 2026-07-28 call's tool up here over HTTP).
            return self.catalog(ctx.session)
        for child in children:
            child.look_for_login()  # the user may have just logged in: listed once up
            if child.dormant and not child.cached_tools:
                child.start()  # lazy with nothing kept: its tools are known only by asking
        await asyncio.gather(
            *(child.listing(kind, self._list_wait(child), live=live) for child in children)
        )
        if kind == "tools":
            self._report_slow(children)
        return self.catalog(ctx.session)

    def _list_wait(self, child: Child) -> float | None:
        """How long a listing waits for `child`: its list timeout, or while the gateway is
        young and the child in its first start, until the startup budget is spent (Codex
        lists tools once: a child missing from its first list is missing all session)."""
        if child.was_up or child.state != "starting":
            return None
        left = self._budget_end - asyncio.get_running_loop().time()
        return max(left, child.list_timeout)

    def _report_slow(self, children: Sequence[Child]) -> None:
        """Say which child a listing went without, and what to set."""
        for child in children:
            if child.state != "starting" or child.was_up or child.current_tools:
                continue
            if f"slow:{child.name}" in self._warned:
                continue
            self._warned.add(f"slow:{child.name}")
            log.warning(
                "%s: still starting, so this tool list goes without its tools (Codex lists "
                "tools once per session and would not see them; they are cached for the next "
                "start). To wait for it, set %s (now %d) above its start time in the gateway's "
                "env, and Codex's startup_timeout_sec above that",
                child.name, STARTUP_BUDGET_ENV, round(self.env.startup_budget * 1000),
            )  # fmt: skip

    # -- tools -----------------------------------------------------------------
    async def list_tools(self, ctx: RequestContext) -> Sequence[JsonObject]:
        return (await self._listed("tools", ctx)).tools

    def call_tool(
        self, name: str, arguments: JsonObject, ctx: RequestContext
    ) -> Awaitable[JsonObject]:
        catalog = self._catalog  # the shared catalog, while it is current
        route = catalog.routes.get(name) if catalog is not None else None
        if route is None:
            return self._call_routed(name, arguments, ctx)
        child, tool = route  # the hot path: nothing else is looked at
        if self.relay_observer is not None:
            self.relay_observer.on_relay(child.name, tool, ctx)
        if tool in child.task_required:
            return self.front_tasks.follow(child, tool, arguments, ctx)
        return relay.call_tool(child, tool, arguments, ctx)

    def _call_routed(
        self, name: str, arguments: JsonObject, ctx: RequestContext
    ) -> Awaitable[JsonObject]:
        if name == STATUS_TOOL:  # before a catalog: building one starts per-session children
            return Ready(status_result(self.children(ctx.session, start=False), self.per_session))
        route = self.catalog(ctx.session).routes.get(name)
        if route is None:
            return self._call_after_listing(name, arguments, ctx)
        return self._relay_call(route, arguments, ctx)

    def _relay_call(
        self, route: tuple[Child, str], arguments: JsonObject, ctx: RequestContext
    ) -> Awaitable[JsonObject]:
        child, tool = route
        if self.relay_observer is not None:
            self.relay_observer.on_relay(child.name, tool, ctx)
        if tool in child.task_required:
            return self.front_tasks.follow(child, tool, arguments, ctx)
        return relay.call_tool(child, tool, arguments, ctx)

    async def _call_after_listing(
        self, name: str, arguments: JsonObject, ctx: RequestContext
    ) -> JsonObject:
        # Not in the catalog: perhaps not in a kept listing, but in the child's own by now.
        for _ in range(_RELOADS_OUTWAITED + 1):
            children = self.children(ctx.session, start=False)
            catalog = await self._listed("tools", ctx, live=True)
            route = catalog.routes.get(name)
            if route is not None or self.children(ctx.session, start=False) == children:
                break
            # A reload replaced a child while this call waited for its listing: the call
            # waits for the successor's instead of failing for the one that left.
        if route is None:
            refused = self.per_session.refusal_for(ctx.session, name, self.passthrough)
            if refused is not None:
                raise refused
            down = self._down_server_of(name, catalog)
            if down is not None:  # say why its tools are gone (a spawn error, a restart)
                raise relay.unavailable(*down)
            raise UnknownTool(name)
        return await self._relay_call(route, arguments, ctx)

    def _down_server_of(self, name: str, catalog: Catalog) -> tuple[Child, str] | None:
        """The child that is down and whose tool `name` would be, with the tool's name (a
        dormant one is not down: its kept listing is what it offers, so `name` is unknown,
        as a policy's hidden name is)."""
        for namespace, child in catalog.namespaces.items():
            if child.connection is not None or child.dormant:
                continue
            if self.passthrough:
                return child, name
            prefix = namespace + SEPARATOR
            if name.startswith(prefix):
                return child, name[len(prefix) :]
        return None

    # -- prompts ---------------------------------------------------------------
    async def list_prompts(self, ctx: RequestContext) -> Sequence[JsonObject]:
        return (await self._listed("prompts", ctx)).prompts

    async def get_prompt(
        self, name: str, arguments: dict[str, str], ctx: RequestContext
    ) -> JsonObject:
        route = await self._prompt_route(name, ctx)
        if route is None:
            raise UnknownPrompt(name)
        params: JsonObject = {"name": route[1], "arguments": arguments}
        return await relay.request(route[0], "prompts/get", params, ctx)

    async def _prompt_route(self, name: str, ctx: RequestContext) -> tuple[Child, str] | None:
        route = self.catalog(ctx.session).prompt_routes.get(name)
        return route or (await self._listed("prompts", ctx)).prompt_routes.get(name)

    # -- resources -------------------------------------------------------------
    async def list_resources(self, ctx: RequestContext) -> Sequence[JsonObject]:
        return (await self._listed("resources", ctx)).resources

    async def list_resource_templates(self, ctx: RequestContext) -> Sequence[JsonObject]:
        return (await self._listed("resourceTemplates", ctx)).templates

    async def read_resource(self, uri: str, ctx: RequestContext) -> list[JsonObject]:
        route = self.catalog(ctx.session).resource_route(uri)
        if route is None:
            raise ResourceNotFound(uri)
        child, inner = route
        result = await relay.request(child, "resources/read", {"uri": inner}, ctx)
        contents = result.get("contents")
        return [
            {**item, "uri": outer_uri(child.name, item["uri"], self.passthrough)}
            if isinstance(item.get("uri"), str)
            else item
            for item in (contents if isinstance(contents, list) else [])
            if isinstance(item, dict)
        ]

    async def subscribe(self, uri: str, ctx: RequestContext) -> None:
        await self._subscription(uri, ctx, subscribe=True)

    async def unsubscribe(self, uri: str, ctx: RequestContext) -> None:
        await self._subscription(uri, ctx, subscribe=False)

    async def _subscription(self, uri: str, ctx: RequestContext, *, subscribe: bool) -> None:
        route = self.catalog(ctx.session).resource_route(uri)
        if route is None:
            return
        if subscribe:
            await self.subscriptions.acquire(*route)
            return
        going = self.subscriptions.release(*route)
        if going is not None:
            await going

    async def listen_started(self, subscription: Subscription, ctx: RequestContext) -> None:
        # A principal's per-session children send to its listens (any of them); a shared
        # child's resources are followed for the listens that name them.
        owner = self.per_session.owner(ctx.session, create=False)
        if subscription.resources:
            await self._listed("resources", ctx)  # the children serving the URIs are up
        elif owner is None:
            return  # the core's alone: shared children's list changes reach it there
        routes = self.catalog(ctx.session).resource_route
        await self.subscriptions.listen_started(
            subscription, owner, routes, FrontCall.of(ctx).modern
        )

    def listen_ended(self, subscription: Subscription) -> None:
        self.subscriptions.listen_ended(subscription)

    # -- skills (relay/skills.py) ------------------------------------------------
    # A child serving skills serves resources: once each child has listed its resources
    # (or was skipped as too slow), it is up and says whether it serves skills.
    async def list_skills(self, ctx: RequestContext) -> Sequence[JsonObject]:
        await self._listed("resources", ctx)
        children = self.children(ctx.session)
        return await relay_skills.list_skills(children, ctx, self._outer)

    async def get_skill(self, uri: str, ctx: RequestContext) -> JsonObject:
        route = (await self._listed("resources", ctx)).resource_route(uri)
        return await relay_skills.get_skill(route, uri, ctx, self._outer)

    async def read_directory(self, uri: str, ctx: RequestContext) -> Sequence[JsonObject]:
        route = (await self._listed("resources", ctx)).resource_route(uri)
        return await relay_skills.read_directory(route, uri, ctx, self._outer)

    async def skills_holding(self, uris: Sequence[str], ctx: RequestContext) -> set[str] | None:
        """For the policy (policy/gateway.py): the SKILL.md URIs of the skills of the
        children `uris` name, each listed live. A child not up (lazy, stopped for idleness,
        restarting) is started and waited for first, as the request naming it would start
        it, so what its skills hide is decided before it serves anything; None when one does
        not come up or cannot list them (the request is refused)."""
        catalog = self.catalog(ctx.session)
        children = {route[0] for uri in uris if (route := catalog.resource_route(uri))}
        modern = FrontCall.of(ctx).modern
        found: set[str] = set()
        for child in children:
            try:
                if await child.connection_for(modern) is None:
                    return None
                found |= await relay_skills.skill_uris(child, ctx, self._outer)
            except McpError:
                return None
        return found

    def _outer(self, server: str, uri: str) -> str:
        return outer_uri(server, uri, self.passthrough)

    # -- completion ------------------------------------------------------------
    async def complete(
        self,
        ref: JsonObject,
        argument: JsonObject,
        context_arguments: dict[str, str],
        ctx: RequestContext,
    ) -> JsonObject | None:
        if ref.get("type") == "ref/prompt":
            route = await self._prompt_route(str(ref.get("name")), ctx)
            key = "name"
        else:
            route = self.catalog(ctx.session).resource_route(str(ref.get("uri")))
            key = "uri"
        if route is None:
            return None
        child, inner = route
        if child.connection is not None and "completions" not in child.connection.capabilities:
            return None
        params: JsonObject = {"ref": {**ref, key: inner}, "argument": argument}
        if context_arguments:
            params["context"] = {"arguments": context_arguments}
        result = await relay.request(child, "completion/complete", params, ctx)
        completion = result.get("completion")
        return completion if isinstance(completion, dict) else None

    # -- the session's settings -------------------------------------------------
    async def set_log_level(self, level: str, ctx: RequestContext) -> None:
        """A per-session child gets its session's level; shared children get the most
        verbose level any session asked for (each session still filters its own)."""
        targets = [(c, level) for c in self.per_session.children(ctx.session, start=False)]
        shared_level = LOG_LEVELS[min((s.log_threshold for s in self._sessions), default=0)]
        if shared_level != self._shared_log_level:
            self._shared_log_level = shared_level
            targets += [(child, shared_level) for child in self.shared]
        await asyncio.gather(*(self._set_level(c, lvl, ctx) for c, lvl in targets))

    async def _set_level(self, child: Child, level: str, ctx: RequestContext) -> None:
        connection = child.connection  # one spoken to in 2026-07-28 is told in each request
        if connection is None or connection.session.stateless is not None:
            return
        if "logging" not in connection.capabilities:
            return
        try:
            await relay.request(child, "logging/setLevel", {"level": level}, ctx)
        except McpError as error:
            log.info(
                "%s: logging/setLevel failed: %s",
                child.name,
                error.message,
                extra=ctx.session.log_extra,
            )

    def roots_changed(self, session: ServerSession) -> None:
        for child in [*self.shared, *self.per_session.children(session, start=False)]:
            connection = child.connection
            if connection is not None and "roots" in child.client_capabilities:
                connection.session.notify("notifications/roots/list_changed")

    # -- what children send (ChildHost) ------------------------------------------
    def _changed(self) -> None:
        self.generation += 1
        self._catalog = None
        for listener in self.change_listeners:
            listener()

    def child_changed(self, child: Child, kinds: Sequence[ListKind]) -> None:
        self._changed()
        self.subscriptions.follow_child(child)  # a 2026-07-28 child's own listen
        owner = child.owner
        for kind in kinds:
            if owner is None:
                self.notify_list_changed(kind)
            elif owner.session is None:  # a 2026-07-28 principal's: to its open listens
                self.subscriptions.list_changed(owner, kind)
            elif owner.reachable:
                owner.session.list_changed(kind)

    def child_connected(self, child: Child, connection: Connection, own: bool) -> None:
        for listener in self.connect_listeners:
            listener(child, connection, own)

    def child_notification(
        self, child: Child, method: str, params: JsonObject, origin: Hashable, inflight: InFlight
    ) -> None:
        if method == TASK_STATUS:
            self.front_tasks.child_status(child, inflight, params)
            return
        if method == "notifications/progress":  # a 2025-11-25 task's, after the call that made it
            self.front_tasks.child_progress(inflight, params)
            return
        if method == "notifications/resources/updated":
            uri = params.get("uri")
            if isinstance(uri, str):
                outer = outer_uri(child.name, uri, self.passthrough)
                owner = child.owner
                if owner is None:
                    self.notify_resource_updated(outer)
                    return
                if owner.session is not None and outer in owner.session.subscriptions:
                    owner.session.notify(method, {**params, "uri": outer})
                # and its owner's listens (a principal's, or a 2026-07-28 front's over stdio)
                self.subscriptions.resource_updated(owner, outer)
            return
        level, data = params.get("level"), params.get("data")
        if level not in LOG_LEVELS:
            return
        logger = params.get("logger")
        if not self.passthrough:
            logger = f"{child.name}.{logger}" if isinstance(logger, str) else child.name
        entry = attribution.entry_for(child, inflight, origin, params, self.sole_session)
        if entry is not None:
            call = entry.ctx
            call.session.log(str(level), data, logger, related_request_id=call.request_id)
            return
        session = child.owner.session if child.owner is not None else self._sole_client(child)
        if session is not None and session.initialized and not session.closed:
            session.log(str(level), data, logger)
        elif child.owner is None:  # a shared child: whose it is, nobody can tell
            attribution.unrouted(child, "logging", f"a log message ({level})", self.config.path)
        else:
            log.debug("%s: a log message outside any call of %s", child.name, child.owner.label)

    async def child_request(
        self, child: Child, method: str, params: JsonObject, origin: Hashable, inflight: InFlight
    ) -> JsonObject:
        entry = attribution.entry_for(child, inflight, origin, params, self.sole_session)
        params = await self.front_tasks.front_params(inflight, params)  # a task's: by our id
        if entry is not None:  # asked as the front's revision asks (relay/front.py)
            return await front_of(entry).put(child.name, method, params, entry)
        owner = child.owner
        session = self._sole_client(child) if owner is None else owner.session
        if session is None or session.closed:
            if owner is None:
                attribution.unrouted(child, method, method, self.config.path)
                raise attribution.refusal(child, method)
            raise McpError(
                INTERNAL_ERROR,
                f"{method}: {owner.label} has no stream outside its calls "
                "(send it while serving a request)",
            )
        check_client_can(child.name, method, params, session.client_capabilities)
        return await session.request(method, params)

    def _sole_client(self, child: Child) -> ServerSession | None:
        """The one client session whatever a shared child says can be for: a stdio
        gateway's only one, or the session that alone has used the child (attribution)."""
        return self.sole_session() or child.callers.sole

    def spawn(self, work: Awaitable[Any]) -> None:
        task = asyncio.ensure_future(work)
        self._background.add(task)
        task.add_done_callback(self._background.discard)
