"""TM Dev Lab benchmark v2's Python server as the benchmark runs it: the official SDK's
FastMCP (`mcp<2`), stateless, JSON responses, in Starlette under uvicorn, with the same
three tools of workload.py on the same shared clients (made in the app's lifespan: in
stateless mode FastMCP's own lifespan would run once per request).

    uvicorn sdk_server:app --app-dir bench/tm_v2 --loop uvloop [--workers N]
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from typing import Any

import workload
from mcp.server.fastmcp import FastMCP
from starlette.applications import Starlette
from starlette.routing import Mount

mcp = FastMCP("tm-bench", stateless_http=True, json_response=True)
shared: dict[str, Any] = {}


@contextlib.asynccontextmanager
async def lifespan(app: Starlette) -> AsyncIterator[None]:
    shared["http"], shared["redis"] = workload.clients()
    async with mcp.session_manager.run():
        yield
    await workload.close(shared["http"], shared["redis"])


@mcp.tool()
async def search_products(
    category: str = "Electronics",
    min_price: float = 50.0,
    max_price: float = 500.0,
    limit: int = 10,
) -> str:
    """Search products by category and price range, merged with popularity data."""
    return await workload.search_products(
        shared["http"], shared["redis"], category, min_price, max_price, limit
    )


@mcp.tool()
async def get_user_cart(user_id: str = "user-00042") -> str:
    """Get user cart details with recent order history."""
    return await workload.get_user_cart(shared["http"], shared["redis"], user_id)


@mcp.tool()
async def checkout(user_id: str = "user-00042", items: list[dict[str, Any]] | None = None) -> str:
    """Process checkout: calculate total, update rate limit, record history."""
    return await workload.checkout(shared["http"], shared["redis"], user_id, items)


app = Starlette(lifespan=lifespan, routes=[Mount("/", mcp.streamable_http_app())])
