"""Pins the aiohttp internals our connection hygiene builds on.

`GuardedConnection` (pkg/codex_mcp/transports/http/connections.py) subclasses aiohttp's
`web_protocol.RequestHandler` and `GuardedSite` its `web.BaseSite`: neither is aiohttp's
public API, and an upgrade may rename a hook, change what aiohttp passes it, or stop calling
it, and our override would then silently do nothing (no read timeouts, no connection cap).
These tests fail with a message that says what to check, first on the signatures, then on
the behaviour over a real socket.
"""

from __future__ import annotations

import asyncio
import inspect
import json
from collections.abc import AsyncIterator
from typing import Any

import aiohttp
import pytest
from aiohttp import web
from aiohttp.web_protocol import RequestHandler
from codex_mcp.transports.http.connections import (
    ConnectionLimits,
    GuardedConnection,
    GuardedSite,
    RequestTracker,
)
from support.polling import until

CHECK = (
    f"aiohttp {aiohttp.__version__} changed RequestHandler.{{name}}, which GuardedConnection "
    "(pkg/codex_mcp/transports/http/connections.py) overrides: read aiohttp's "
    "web_protocol.py for {what}, and adapt the override before upgrading"
)

#: The RequestHandler hooks GuardedConnection overrides, and what it relies on in each.
OVERRIDDEN = {
    "connection_made": "when a connection is admitted (the cap and the header clock)",
    "connection_lost": "when a connection's slot is released",
    "data_received": "when bytes arrive (the body clock; b'' when aiohttp resumes reading)",
    "handle_error": "how an unparsable request is answered (400s as JSON-RPC errors)",
    "finish_response": "how each answer is written (a cut body lingers after it)",
    "log_exception": "how the rest of an unreadable body is logged (exc_info=...)",
}

#: The keyword arguments GuardedSite passes when it makes a GuardedConnection.
CONSTRUCTED_WITH = ("loop", "access_log", "keepalive_timeout")


def _positional(function: Any) -> list[tuple[str, Any]]:
    """Names and kinds of the parameters, *args and **kwargs left out."""
    skipped = (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD)
    return [
        (p.name, p.kind)
        for p in inspect.signature(function).parameters.values()
        if p.kind not in skipped
    ]


@pytest.mark.parametrize("name", sorted(OVERRIDDEN))
def test_each_overridden_hook_exists_with_the_parameters_we_take(name: str) -> None:
    what = OVERRIDDEN[name]
    assert name in vars(GuardedConnection), f"GuardedConnection no longer overrides {name}"
    theirs = getattr(RequestHandler, name, None)
    assert callable(theirs), CHECK.format(name=name, what=f"{what}: it is gone")
    ours = vars(GuardedConnection)[name]
    assert _positional(ours) == _positional(theirs), CHECK.format(
        name=name,
        what=f"{what}: it now takes {inspect.signature(theirs)}, we take {inspect.signature(ours)}",
    )
    assert inspect.iscoroutinefunction(ours) == inspect.iscoroutinefunction(theirs), CHECK.format(
        name=name,
        what=f"{what}: it is{'' if inspect.iscoroutinefunction(theirs) else ' not'} "
        "a coroutine now",
    )


def test_the_constructor_takes_what_guarded_site_passes() -> None:
    parameters = inspect.signature(RequestHandler.__init__).parameters
    for keyword in CONSTRUCTED_WITH:
        assert keyword in parameters, CHECK.format(
            name="__init__", what=f"the {keyword}= argument GuardedSite.start passes"
        )
    assert list(parameters)[1] == "manager", CHECK.format(
        name="__init__", what="its first argument (the web.Server)"
    )


async def test_the_base_hooks_we_call_and_the_state_we_read_are_there() -> None:
    """What the overrides use of RequestHandler besides the hooks: force_close(), the
    transport (set to None to keep aiohttp from closing a lingering socket), the loop."""
    assert callable(getattr(RequestHandler, "force_close", None)), CHECK.format(
        name="force_close", what="closing after the answer"
    )

    async def handler(request: web.BaseRequest) -> web.Response:
        return web.Response()

    loop = asyncio.get_running_loop()
    limits = ConnectionLimits(max_connections=1, header_timeout=1, body_timeout=1)
    connection = GuardedConnection(
        web.Server(handler), limits, loop=loop, access_log=None, keepalive_timeout=1
    )
    assert connection.transport is None, CHECK.format(name="transport", what="the attribute")
    assert connection._loop is loop, CHECK.format(name="_loop", what="the loop the clocks use")


@pytest.fixture
async def guarded() -> AsyncIterator[tuple[str, int, ConnectionLimits]]:
    """A real GuardedSite on 127.0.0.1 (as `app.py` builds it) with short timeouts; its
    handler answers whether the request came over a GuardedConnection."""

    async def handler(request: web.Request) -> web.Response:
        return web.Response(text=type(request.protocol).__name__)

    tracker = RequestTracker()
    app = web.Application(middlewares=[tracker.middleware])
    app.router.add_get("/", handler)
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    limits = ConnectionLimits(max_connections=8, header_timeout=0.5, body_timeout=5)
    site = GuardedSite(runner, "127.0.0.1", 0, limits, idle_timeout=30)
    await site.start()
    try:
        yield "127.0.0.1", site.port, limits
    finally:
        await runner.cleanup()


async def _exchange(port: int, data: bytes, timeout: float = 10) -> bytes:
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    try:
        writer.write(data)
        await writer.drain()
        return await asyncio.wait_for(reader.read(), timeout)
    finally:
        writer.close()


async def test_aiohttp_calls_our_hooks_on_a_real_connection(
    guarded: tuple[str, int, ConnectionLimits],
) -> None:
    host, port, limits = guarded
    # connection_made / finish_response / the middleware's request.protocol
    reader, writer = await asyncio.open_connection(host, port)
    await until(lambda: limits.open == 1, 10, "connection_made admitting the connection")
    writer.write(b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
    answer = await asyncio.wait_for(reader.read(), 10)
    writer.close()
    assert answer.startswith(b"HTTP/1.1 200"), CHECK.format(
        name="finish_response", what=f"how an answer is written (got {answer[:200]!r})"
    )
    assert answer.endswith(b"GuardedConnection"), (
        "request.protocol is no longer the connection aiohttp made for the request: "
        "RequestTracker.middleware relies on it (check aiohttp's web_request.BaseRequest)"
    )
    # connection_lost
    await until(lambda: limits.open == 0, 10, CHECK.format(name="connection_lost", what="it"))

    # handle_error: aiohttp's own 400 for bytes it cannot parse, answered as ours.
    junk = await _exchange(port, b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nBad\x01Header: x\r\n\r\n")
    head, _, body = junk.partition(b"\r\n\r\n")
    assert head.split(b" ", 2)[1] == b"400", junk[:300]
    assert b"application/json" in head and "error" in json.loads(body), CHECK.format(
        name="handle_error", what=f"what it is called with (answered {junk[:300]!r})"
    )

    # connection_made's header clock: nothing sent, 408 after header_timeout.
    silent = await _exchange(port, b"")
    assert silent.startswith(b"HTTP/1.1 408"), CHECK.format(
        name="connection_made", what=f"when it is called (a silent client got {silent!r})"
    )
