"""Metrics for the stdio server (`codex-mcp --metrics-port PORT`): /metrics and the status
page on 127.0.0.1 only, without a token (specs/observability.md, "Metrics": the stdio server)."""

from __future__ import annotations

import logging
from collections.abc import Coroutine
from typing import Any

from aiohttp import web

from .enable import Observed
from .web import pages

log = logging.getLogger("codex_mcp.metrics")

HOST = "127.0.0.1"


async def serving_metrics(main: Coroutine[Any, Any, Any], observed: Observed, port: int) -> Any:
    """Run `main` (the stdio server) with the metrics server beside it."""
    scrape, status_page = pages(observed.state)
    app = web.Application()
    app.router.add_get("/metrics", scrape)
    app.router.add_get("/", status_page)
    runner = web.AppRunner(app, access_log=None, handle_signals=False)
    await runner.setup()
    site = web.TCPSite(runner, HOST, port)
    try:
        await site.start()
    except OSError as error:
        await runner.cleanup()
        main.close()
        from ..launch import cannot_listen

        raise cannot_listen(HOST, port, error) from None
    bound = runner.addresses[0][1]
    log.info("metrics on http://%s:%d/metrics", HOST, bound)
    try:
        return await main
    finally:
        await runner.cleanup()
