"""`serve_http` itself (the listener, its connections and their limits) on 127.0.0.1 in
the test's event loop, on a free port."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from typing import Any

from codex_mcp.core.server import ServerCore
from codex_mcp.transports.http import HttpConfig, serve_http
from http_helpers import build_test_server


@contextlib.asynccontextmanager
async def served(core: ServerCore | None = None, **config: Any) -> AsyncIterator[int]:
    """Serve `core` (the test server's tools by default) with HttpConfig(**config);
    yields the port."""
    stop = asyncio.Event()
    listening: asyncio.Future[str] = asyncio.get_running_loop().create_future()
    task = asyncio.create_task(
        serve_http(
            core or build_test_server().core,
            HttpConfig(port=0, **config),
            stop=stop,
            on_listening=listening.set_result,
        )
    )
    done, _ = await asyncio.wait([task, listening], return_when=asyncio.FIRST_COMPLETED)
    if task in done:
        task.result()  # it failed to start: raise why
    try:
        yield int(listening.result().rsplit(":", 1)[1].split("/")[0])
    finally:
        stop.set()
        await asyncio.wait_for(task, 30)
