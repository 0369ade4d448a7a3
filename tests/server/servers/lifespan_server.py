"""A server whose tools share one aiohttp session made by its lifespan: the pattern
`Server(lifespan=...)` is for. LIFESPAN_MARKS names a file the lifespan appends to when
it is entered and exited (with the pid: each worker has its own); LIFESPAN_FAIL makes
entering it fail, as a backend that refuses would."""

from __future__ import annotations

import contextlib
import os
from collections.abc import AsyncIterator
from pathlib import Path

import aiohttp
from codex_mcp import Context, Server

MARKS = Path(os.environ["LIFESPAN_MARKS"])
BACKEND = os.environ.get("LIFESPAN_BACKEND", "http://127.0.0.1:1")


def mark(event: str) -> None:
    with MARKS.open("a") as marks:
        marks.write(f"{event} {os.getpid()}\n")


@contextlib.asynccontextmanager
async def shared_client(server: Server) -> AsyncIterator[aiohttp.ClientSession]:
    if os.environ.get("LIFESPAN_FAIL"):
        raise ConnectionRefusedError(f"the backend at {BACKEND} refused the connection")
    async with aiohttp.ClientSession(BACKEND) as http:
        mark("enter")
        yield http
    mark(f"exit closed={http.closed}")


server = Server("lifespan-demo", lifespan=shared_client)


@server.tool
async def fetch(path: str, ctx: Context) -> str:
    """GET a path of the backend with the server's one shared client."""
    http: aiohttp.ClientSession = ctx.lifespan_context
    async with http.get(path) as response:
        return f"{await response.text()} via client {id(http)} in {os.getpid()}"


if __name__ == "__main__":
    server.run()
