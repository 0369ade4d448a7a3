"""TM Dev Lab benchmark v2's server written with codex-mcp: the three tools of workload.py,
sharing the aiohttp session and the Redis client that the server's lifespan makes.

    codex-mcp-http --serve bench/tm_v2/ours.py   (TM_API_URL, TM_REDIS_URL)
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from codex_mcp import Context, Server

sys.path.insert(0, str(Path(__file__).resolve().parent))  # `--serve` loads us by path
import workload


@contextlib.asynccontextmanager
async def shared_clients(server: Server) -> AsyncIterator[Any]:
    http, store = workload.clients()
    try:
        yield http, store
    finally:
        await workload.close(http, store)


server = Server("tm-bench", lifespan=shared_clients)


@server.tool
async def search_products(
    ctx: Context,
    category: str = "Electronics",
    min_price: float = 50.0,
    max_price: float = 500.0,
    limit: int = 10,
) -> str:
    """Search products by category and price range, merged with popularity data."""
    return await workload.search_products(
        *ctx.lifespan_context, category, min_price, max_price, limit
    )


@server.tool
async def get_user_cart(ctx: Context, user_id: str = "user-00042") -> str:
    """Get user cart details with recent order history."""
    return await workload.get_user_cart(*ctx.lifespan_context, user_id)


@server.tool
async def checkout(
    ctx: Context, user_id: str = "user-00042", items: list[dict[str, Any]] | None = None
) -> str:
    """Process checkout: calculate total, update rate limit, record history."""
    return await workload.checkout(*ctx.lifespan_context, user_id, items)
