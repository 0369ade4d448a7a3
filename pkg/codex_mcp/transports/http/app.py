"""The aiohttp application and a runner with graceful shutdown."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import signal
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from aiohttp import web
from aiohttp.typedefs import Handler

from ...core import jsonrpc
from ...core.errors import McpError
from ...core.server import ServerCore
from ...launch import cannot_listen
from ...observe.web import observe_app
from ...worker_process import config_error
from .admission import Admission
from .config import HttpConfig
from .connections import (
    ConnectionLimits,
    GuardedConnection,
    GuardedSite,
    RequestTracker,
    connection_cap,
)
from .cors import Cors
from .errors import StoreUnavailable, busy_response
from .exchange import is_request, read_body
from .faults import watch_accept_faults
from .legacy_sse import LegacySse
from .manager import SessionManager
from .oauth import RESOURCE_SERVER_KEY
from .security import OPEN_PATH_SUFFIXES
from .sessions import Capacity
from .single_event import SingleEventSse
from .store import MemoryStore, SessionStore
from .streamable import StreamableHttp

if TYPE_CHECKING:
    from ...policy import Policy

log = logging.getLogger("codex_mcp.http")

MANAGER_KEY = web.AppKey("manager", SessionManager)
READY_KEY = web.AppKey("ready", dict)


class Fatal:
    """An error found after the server started listening that retrying cannot fix (Redis
    refused the credentials): the server stops, and exits with this one line."""

    def __init__(self) -> None:
        self.message: str | None = None
        self.raised = asyncio.Event()

    def __call__(self, message: str) -> None:
        self.message = message
        self.raised.set()


FATAL_KEY = web.AppKey("fatal", Fatal)


def open_store(config: HttpConfig) -> SessionStore:
    """Memory unless a Redis URL is configured (only then is the Redis client imported)."""
    if not config.redis_url:
        return MemoryStore()
    from ...scale import require_redis_client

    require_redis_client()
    from ...scale.redis_store import RedisStore

    try:
        return RedisStore(
            config.redis_url,
            replay_events=config.replay_events,
            session_ttl=config.session_ttl,
            wait=config.redis_wait,
        )
    except ValueError as exc:  # not a Redis URL, or no such wait: retrying cannot fix it
        config_error(f"codex-mcp-http: {exc}")


def store_gate(store: SessionStore, max_body_bytes: int, storeless: frozenset[str]) -> Any:
    """Sessions on a shared store: while it cannot be reached, every MCP request is
    refused with 503 (the probes answer for themselves), and so is one that finds it
    gone midway. The refusal carries the request's id when its body is one request.
    The `storeless` paths (the operator's pages) need no store: /metrics says it is down."""

    @web.middleware
    async def gate(request: web.Request, handler: Handler) -> web.StreamResponse:
        if request.path.endswith(OPEN_PATH_SUFFIXES) or request.path in storeless:
            return await handler(request)
        if not store.available:
            return busy_response(503, UNREACHABLE, await _id_in_body(request, max_body_bytes))
        try:
            return await handler(request)
        except StoreUnavailable as exc:
            request_id = await _id_in_body(request, max_body_bytes)
            return busy_response(503, f"{UNREACHABLE} ({exc})", request_id)

    return gate


async def _id_in_body(request: web.Request, max_body_bytes: int) -> Any:
    """The id of the one JSON-RPC request a POST's body holds (read within the body cap;
    a handler that read it already left it cached), else None. Only a refusal reads it:
    the served path parses its body once, in its handler."""
    if request.method != "POST" or not request.body_exists:
        return None
    body = await read_body(request, max_body_bytes)
    if isinstance(body, web.Response):
        return None
    try:
        message = jsonrpc.decode(body)
    except McpError:
        return None
    return message["id"] if type(message) is dict and is_request(message) else None


def _policy_of(core: ServerCore) -> Policy | None:
    """The policy deciding for `core`, asked for a call under OAuth (admission.py)."""
    from ...policy.install import policy_of

    return policy_of(core)


UNREACHABLE = "The session store (Redis) is unreachable; try again shortly"
#: Said once at start by a replica on Redis with no keys configured (specs/isolation.md).
REPLICAS_WITHOUT_KEYS = (
    "requestState keys: none configured, so this replica signs with a key of its own and "
    "an input-required round its clients finish on another replica fails as 'tampered'; "
    "set CODEX_MCP_REQUEST_STATE_KEYS (or --request-state-keys-file) to the same keys on "
    "every replica"
)


def create_app(core: ServerCore, config: HttpConfig | None = None) -> web.Application:
    config = config or HttpConfig()
    if config.oauth_tool_scope:  # the policy's modules load only when there is one
        from ...policy.install import require_tool_scopes

        require_tool_scopes(core, config.oauth_tool_scope)
    admission = Admission(config, policy=lambda: _policy_of(core))
    guard = admission.guard
    store = open_store(config)
    tracker = RequestTracker()
    middlewares = [tracker.middleware, admission.middleware]
    if store.shared:
        middlewares.append(store_gate(store, config.max_body_bytes, admission.storeless_paths))
    app = web.Application(client_max_size=config.max_body_bytes, middlewares=middlewares)
    manager = SessionManager(
        core,
        ttl=config.session_ttl,
        max_sessions=config.max_sessions,
        replay_events=config.replay_events,
        json_only=config.json_only,
        capacity=Capacity(config.max_inflight, config.max_session_inflight, core.tasks),
        store=store,
        send_buffer_bytes=config.send_buffer_bytes,
        close_slow=config.slow_client == "close",
    )
    streamable = StreamableHttp(manager, config, admission)
    single = SingleEventSse(manager, admission)
    legacy = LegacySse(manager, config, admission)
    app[MANAGER_KEY] = manager
    app[READY_KEY] = {"ready": True}
    app[FATAL_KEY] = fatal = Fatal()
    if store.shared:
        store.on_fatal = fatal  # type: ignore[attr-defined]
    # /metrics, the status page, and refusals noted (told each answer by the tracker).
    observe_app(app, core, manager, config, tracker, guard.client_address)
    if config.cors_origin:
        Cors(config.cors_origin, guard).install(app, admission.middleware)
    if guard.oauth is not None:
        app[RESOURCE_SERVER_KEY] = guard.oauth
        guard.oauth.add_routes(app)
    prefix = config.prefix
    app.router.add_post(f"{prefix}/mcp", streamable.post)
    app.router.add_get(f"{prefix}/mcp", streamable.get)
    app.router.add_delete(f"{prefix}/mcp", streamable.delete)
    app.router.add_get(f"{prefix}/mcp/sse", single.get)
    app.router.add_get(f"{prefix}/sse", legacy.stream)
    app.router.add_post(f"{prefix}/messages", legacy.post)
    app.router.add_post(f"{prefix}/messages/", legacy.post)
    if config.server_card:
        from .server_card import ServerCardRoute

        ServerCardRoute(core, config, guard).add_routes(app)

    async def healthz(request: web.Request) -> web.Response:
        return web.json_response({"status": "ok"})

    async def readyz(request: web.Request) -> web.Response:
        if not app[READY_KEY]["ready"]:
            return web.json_response({"status": "shutting down"}, status=503)
        if not store.available:  # kept current by the store, as the request gate reads it
            return web.json_response(
                {
                    "status": "session store unreachable",
                    "detail": UNREACHABLE,
                    "reason": getattr(store, "problem", ""),
                },
                status=503,
            )
        stats = manager.stats()
        connection = request.protocol
        if isinstance(connection, GuardedConnection):  # serve_http's listener
            limits = connection.limits
            stats["connections"] = limits.open + limits.probes
            stats["max_connections"] = limits.max_connections
            if limits.no_room(connection):
                detail = (
                    f"every one of the {limits.max_connections} connections is serving a "
                    "request: a new one gets 503"
                )
                return web.json_response(
                    {"status": "connection cap reached", "detail": detail, **stats}, status=503
                )
        workers = config.workers_status() if config.workers_status is not None else None
        if workers is not None:
            # Some worker serves (this one): ready, and saying whether all do.
            stats["workers"] = workers
            if workers.get("serving", 0) < workers.get("of", 0):
                return web.json_response(
                    {"status": "degraded", "reason": workers.get("reason"), **stats}
                )
        return web.json_response({"status": "ready", **stats})

    app.router.add_get(f"{prefix}/healthz", healthz)
    app.router.add_get(f"{prefix}/readyz", readyz)

    cluster: Any = None

    async def start(_: web.Application) -> None:
        nonlocal cluster
        await core.start()
        manager.start()
        if store.shared:
            from ...scale.cluster import Cluster

            await store.start(manager)
            cluster = Cluster(core, store, config.session_ttl)  # type: ignore[arg-type]
            cluster.attach()
            if core.request_state_key_is_ephemeral:
                log.warning(REPLICAS_WITHOUT_KEYS)

    async def stop(_: web.Application) -> None:
        await core.aclose()
        if guard.oauth is not None:
            await guard.oauth.close()
        if cluster is not None:
            cluster.detach()
        await store.close()

    app.on_startup.append(start)
    app.on_cleanup.append(stop)
    return app


#: How long a worker of --workers waits for its shared store before it listens anyway.
WORKER_LISTEN_WAIT: Final = 2.0


async def serve_http(
    core: ServerCore,
    config: HttpConfig,
    *,
    stop: asyncio.Event | None = None,
    on_listening: Callable[[str], None] | None = None,
) -> None:
    """Serve until SIGTERM/SIGINT (or `stop`), then shut down gracefully: stop accepting,
    let in-flight calls finish (bounded), close the streams."""
    app = create_app(core, config)
    runner = web.AppRunner(
        app,
        handle_signals=False,
        access_log=None,
        shutdown_timeout=config.shutdown_timeout,
        # A client that hangs up ends its handler at once: an idle GET stream would
        # otherwise hold the session's one stream slot (409) until the next keepalive.
        handler_cancellation=True,
    )
    await runner.setup()
    limits = ConnectionLimits(
        connection_cap(config.max_connections),
        config.header_timeout,
        config.body_timeout,
        config.body_min_rate,
    )
    loop = asyncio.get_running_loop()
    unwatch = watch_accept_faults(loop, limits.accept_faults)
    site = GuardedSite(
        runner, config.host, config.port, limits, config.idle_timeout, config.reuse_port
    )
    if config.reuse_port:
        # A worker of --workers shares the port with its siblings: while it cannot serve
        # (its Redis connection still opening, about 0.1 s), the kernel should give new
        # connections to them rather than to it, which would answer 503. A Redis that is
        # not there still gets each worker listening, answering 503 with the reason.
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(app[MANAGER_KEY].store.connected(), WORKER_LISTEN_WAIT)
    try:
        await site.start()
    except OSError as error:
        unwatch()
        await runner.cleanup()
        raise cannot_listen(config.host, config.port, error) from None
    host = f"[{config.host}]" if ":" in config.host else config.host
    url = f"http://{host}:{site.port}{config.prefix}/mcp"
    oauth = app.get(RESOURCE_SERVER_KEY)
    if oauth is not None and oauth.resource_from_listener:
        oauth.use_resource(url)  # on loopback, the resource is where we listen
    log.info("listening on %s (at most %d connections)", url, limits.max_connections)
    if on_listening is not None:
        on_listening(url)
    stop = stop or asyncio.Event()
    for signum in (signal.SIGTERM, signal.SIGINT):
        with contextlib.suppress(NotImplementedError, RuntimeError):
            loop.add_signal_handler(signum, stop.set)
    fatal = app[FATAL_KEY]
    waiting = [asyncio.ensure_future(stop.wait()), asyncio.ensure_future(fatal.raised.wait())]
    try:
        await asyncio.wait(waiting, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for waiter in waiting:
            waiter.cancel()
        log.info("shutting down")
        app[READY_KEY]["ready"] = False
        core.end_subscriptions()  # subscriptions/listen streams end now, not at the timeout
        await site.stop()
        await app[MANAGER_KEY].shutdown(config.shutdown_timeout)
        await runner.cleanup()
        unwatch()
    if fatal.message is not None:
        config_error(fatal.message)


def run_http(core: ServerCore, config: HttpConfig | None = None, **options: Any) -> None:
    """Blocking entry (`server.run("http", port=...)`): `options` are HttpConfig's fields."""
    from ...launch import run

    async def serve() -> None:
        # The config is made inside `run`, so a refused one is its one line too.
        await serve_http(core, config or HttpConfig(**options), on_listening=announcer())

    run(serve())


def announcer(prog: str | None = None) -> Callable[[str], None]:
    """Says where the server listens, on stderr (stdout may be someone's pipe), as `prog`
    (default: the script's name)."""
    name = prog or Path(sys.argv[0]).name

    def announce(url: str) -> None:
        print(f"{name} listening on {url}", file=sys.stderr, flush=True)

    return announce
