"""The aiohttp application and a runner with graceful shutdown."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import signal
from collections.abc import Callable

from aiohttp import web

from ...core.server import ServerCore
from .config import HttpConfig
from .legacy_sse import LegacySse
from .security import Guard
from .sessions import SessionManager
from .single_event import SingleEventSse
from .streamable import StreamableHttp

log = logging.getLogger("codex_mcp.http")

MANAGER_KEY = web.AppKey("manager", SessionManager)
READY_KEY = web.AppKey("ready", dict)


def create_app(core: ServerCore, config: HttpConfig | None = None) -> web.Application:
    config = config or HttpConfig()
    guard = Guard(config)
    app = web.Application(client_max_size=config.max_body_bytes, middlewares=[guard.middleware])
    manager = SessionManager(
        core,
        ttl=config.session_ttl,
        max_sessions=config.max_sessions,
        replay_events=config.replay_events,
        json_only=config.json_only,
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
    site = web.TCPSite(runner, config.host, config.port, reuse_address=True)
    await site.start()
    url = _listening_url(site, config)
    log.info("listening on %s", url)
    if on_listening is not None:
        on_listening(url)
    stop = stop or asyncio.Event()
    loop = asyncio.get_running_loop()
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


def _listening_url(site: web.TCPSite, config: HttpConfig) -> str:
    sockets = getattr(site._server, "sockets", None)  # the real port when port=0
    port = sockets[0].getsockname()[1] if sockets else config.port
    host = f"[{config.host}]" if ":" in config.host else config.host
    return f"http://{host}:{port}{config.prefix}/mcp"


def run_http(core: ServerCore, config: HttpConfig | None = None, **options: object) -> None:
    from ...runtime import run

    cfg = config or HttpConfig(**options)  # type: ignore[arg-type]
    run(serve_http(core, cfg))
