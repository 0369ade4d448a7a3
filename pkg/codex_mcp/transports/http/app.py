"""The aiohttp application and a runner with graceful shutdown."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import signal
from collections.abc import Callable
from typing import Any

from aiohttp import web

from ...core.server import ServerCore
from .config import HttpConfig
from .connections import ConnectionLimits, GuardedSite, connection_cap, track_requests
from .faults import watch_accept_faults
from .legacy_sse import LegacySse
from .security import Guard
from .sessions import Capacity, SessionManager
from .single_event import SingleEventSse
from .streamable import StreamableHttp

log = logging.getLogger("codex_mcp.http")

MANAGER_KEY = web.AppKey("manager", SessionManager)
READY_KEY = web.AppKey("ready", dict)


def create_app(core: ServerCore, config: HttpConfig | None = None) -> web.Application:
    config = config or HttpConfig()
    guard = Guard(config)
    app = web.Application(
        client_max_size=config.max_body_bytes, middlewares=[track_requests, guard.middleware]
    )
    manager = SessionManager(
        core,
        ttl=config.session_ttl,
        max_sessions=config.max_sessions,
        replay_events=config.replay_events,
        json_only=config.json_only,
        capacity=Capacity(config.max_inflight, config.max_session_inflight),
    )
    streamable = StreamableHttp(manager, config)
    single = SingleEventSse(manager)
    legacy = LegacySse(manager, config)
    app[MANAGER_KEY] = manager
    app[READY_KEY] = {"ready": True}
    prefix = config.prefix
    app.router.add_post(f"{prefix}/mcp", streamable.post)
    app.router.add_get(f"{prefix}/mcp", streamable.get)
    app.router.add_delete(f"{prefix}/mcp", streamable.delete)
    app.router.add_get(f"{prefix}/mcp/sse", single.get)
    app.router.add_get(f"{prefix}/sse", legacy.stream)
    app.router.add_post(f"{prefix}/messages", legacy.post)
    app.router.add_post(f"{prefix}/messages/", legacy.post)

    async def healthz(request: web.Request) -> web.Response:
        return web.json_response({"status": "ok"})

    async def readyz(request: web.Request) -> web.Response:
        if not app[READY_KEY]["ready"]:
            return web.json_response({"status": "shutting down"}, status=503)
        return web.json_response({"status": "ready", **manager.stats()})

    app.router.add_get(f"{prefix}/healthz", healthz)
    app.router.add_get(f"{prefix}/readyz", readyz)

    async def start(_: web.Application) -> None:
        await core.start()
        manager.start()
        if core.request_state_key_is_ephemeral:
            log.warning(
                "no request-state key configured (CODEX_MCP_REQUEST_STATE_KEYS): "
                "2026-07-28 input-required rounds work within this process only"
            )

    async def stop(_: web.Application) -> None:
        await core.aclose()

    app.on_startup.append(start)
    app.on_cleanup.append(stop)
    return app


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
        connection_cap(config.max_connections), config.header_timeout, config.body_timeout
    )
    loop = asyncio.get_running_loop()
    unwatch = watch_accept_faults(loop, limits.accept_faults)
    site = GuardedSite(runner, config.host, config.port, limits, config.idle_timeout)
    await site.start()
    host = f"[{config.host}]" if ":" in config.host else config.host
    url = f"http://{host}:{site.port}{config.prefix}/mcp"
    log.info("listening on %s (at most %d connections)", url, limits.max_connections)
    if on_listening is not None:
        on_listening(url)
    stop = stop or asyncio.Event()
    for signum in (signal.SIGTERM, signal.SIGINT):
        with contextlib.suppress(NotImplementedError, RuntimeError):
            loop.add_signal_handler(signum, stop.set)
    try:
        await stop.wait()
    finally:
        log.info("shutting down")
        app[READY_KEY]["ready"] = False
        core.end_subscriptions()  # subscriptions/listen streams end now, not at the timeout
        await site.stop()
        await app[MANAGER_KEY].shutdown(config.shutdown_timeout)
        await runner.cleanup()
        unwatch()


def run_http(core: ServerCore, config: HttpConfig | None = None, **options: Any) -> None:
    """Blocking entry (`server.run("http", port=...)`): `options` are HttpConfig's fields."""
    from ...runtime import run

    run(serve_http(core, config or HttpConfig(**options)))
