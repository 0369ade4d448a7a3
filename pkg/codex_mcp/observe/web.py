"""Observation in the HTTP app: GET /metrics, the status page at /, and a middleware that
notes refused requests (specs/observability.md, "Metrics": access)."""

from __future__ import annotations

import asyncio
import contextlib
import os
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from aiohttp import web
from aiohttp.typedefs import Handler

from .enable import Observed, observe
from .refusals import ClientAddress, RefusalLog
from .state import ServerState
from .status_page import PAGE_HEADERS, render
from .workers import MULTIPROC_ENV

PageHandler = Callable[[web.Request], Awaitable[web.Response]]

if TYPE_CHECKING:
    from ..core.server import ServerCore
    from ..transports.http.config import HttpConfig

#: How often a worker of --workers refreshes its state gauges (children, Redis) for the
#: others' scrapes; a single process refreshes them when scraped.
GAUGE_REFRESH_SECONDS = 5.0


def observe_app(
    app: web.Application,
    core: ServerCore,
    manager: Any,
    config: HttpConfig,
    tracker: Any = None,
    client_address: ClientAddress | None = None,
) -> Observed | None:
    """Add /metrics and / to `app`, and note its refused requests (from `client_address`,
    default the TCP peer): `tracker` (the app's first middleware, connections.RequestTracker)
    tells each answer when given, else a middleware of ours does; with --public-metrics a
    middleware answers /metrics before the guard."""
    observed = observe(
        core,
        metrics=config.metrics,
        audit_log=config.audit_log,
        audit_arguments=config.audit_arguments,
    )
    if observed is None:
        return None
    observed.state.manager = manager
    if observed.sessions is not None:
        observed.sessions.watch_manager(manager)
    refusals = RefusalLog(observed.audit, client_address)
    prefix = config.prefix
    metrics_path = f"{prefix}/metrics"
    scrape, status_page = pages(observed.state)
    public_metrics = config.public_metrics and config.metrics
    watched = tracker is not None
    if watched:
        tracker.watcher = refusals.check

    @web.middleware
    async def noting(request: web.Request, handler: Handler) -> web.StreamResponse:
        if public_metrics and request.path == metrics_path and request.method == "GET":
            return await scrape(request)
        if watched:
            return await handler(request)
        try:
            response = await handler(request)
        except web.HTTPException as error:  # aiohttp's own refusals (a body over the cap)
            refusals.check(request, error)
            raise
        refusals.check(request, response)
        return response

    if config.metrics:
        app.router.add_get(metrics_path, scrape)
        app.router.add_get(f"{prefix}/", status_page)
        if os.environ.get(MULTIPROC_ENV):
            _refresh_gauges_in_background(app, observed)
    place = 1  # after the request tracker, before the guard
    if public_metrics or not watched:
        app.middlewares.insert(place, noting)
        place += 1
    if observed.tracing is not None:  # the request's traceparent header, for its spans
        app.middlewares.insert(place, observed.tracing.middleware())
    return observed


def pages(state: ServerState) -> tuple[PageHandler, PageHandler]:
    """The /metrics and status page handlers over `state` (HTTP server and stdio alike)."""

    async def scrape(request: web.Request) -> web.Response:
        await state.probe_store()
        state.update_gauges()
        from .metrics import exposition  # the first scrape imports prometheus_client

        body, content_type = exposition()
        response = web.Response(body=body)
        response.headers["Content-Type"] = content_type
        return response

    async def status_page(request: web.Request) -> web.Response:
        response = web.Response(text=render(state.snapshot()), content_type="text/html")
        response.headers.update(PAGE_HEADERS)
        return response

    return scrape, status_page


def _refresh_gauges_in_background(app: web.Application, observed: Observed) -> None:
    async def refresh(_: web.Application) -> Any:
        async def loop() -> None:
            while True:  # from one period after start: the store starts after this
                await asyncio.sleep(GAUGE_REFRESH_SECONDS)
                await observed.state.probe_store()
                observed.state.update_gauges()

        task = asyncio.get_running_loop().create_task(loop())
        yield
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task

    app.cleanup_ctx.append(refresh)
