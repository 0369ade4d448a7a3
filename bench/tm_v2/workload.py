"""The three tools of TM Dev Lab's MCP server benchmark v2, written once for both servers
(ours and the official SDK's FastMCP): each does its I/O against Redis and the product API
in parallel, as the benchmark's Python server does, through one shared aiohttp session and
one redis.asyncio client that the server's lifespan made. Results are JSON text.

Redis holds what tm_v2/seed.py put there; the API is tm_v2/api.py.
"""

from __future__ import annotations

import asyncio
import json
import os
import time
from typing import Any

import aiohttp
import redis.asyncio as redis

SERVER_TYPE = os.environ.get("TM_SERVER_TYPE", "python")
DEFAULT_ITEMS = [{"product_id": 42, "quantity": 2}, {"product_id": 1337, "quantity": 1}]


def clients() -> tuple[aiohttp.ClientSession, redis.Redis]:
    """The clients a server makes once (in its lifespan) and every call shares."""
    api = os.environ["TM_API_URL"]
    http = aiohttp.ClientSession(api, connector=aiohttp.TCPConnector(limit=0))
    # A caller waits for one of 100 connections (redis-py's default pool raises past 100,
    # which a slower server, with more calls in flight, reaches first).
    pool = redis.BlockingConnectionPool.from_url(
        os.environ["TM_REDIS_URL"], max_connections=100, timeout=10, decode_responses=True
    )
    return http, redis.Redis.from_pool(pool)


async def close(http: aiohttp.ClientSession, store: redis.Redis) -> None:
    await http.close()
    await store.aclose()


async def _get_json(http: aiohttp.ClientSession, path: str, **params: Any) -> Any:
    query = {key: str(value) for key, value in params.items()}
    async with http.get(path, params=query) as response:
        response.raise_for_status()
        return await response.json()


async def _post_json(http: aiohttp.ClientSession, path: str, body: Any) -> Any:
    async with http.post(path, json=body) as response:
        response.raise_for_status()
        return await response.json()


async def search_products(
    http: aiohttp.ClientSession,
    store: redis.Redis,
    category: str,
    min_price: float,
    max_price: float,
    limit: int,
) -> str:
    """Products of a category in a price range, with the ten most popular ids."""
    found, popular = await asyncio.gather(
        _get_json(
            http,
            "/products/search",
            category=category,
            min_price=min_price,
            max_price=max_price,
            limit=limit,
        ),
        store.zrevrangebyscore("bench:popular", "+inf", "-inf", start=0, num=10),
    )
    top10 = [int(member.split(":")[1]) for member in popular]
    rank = {product_id: place + 1 for place, product_id in enumerate(top10)}
    products = [
        {
            "id": p["id"],
            "sku": p["sku"],
            "name": p["name"],
            "price": p["price"],
            "rating": p["rating"],
            "popularity_rank": rank.get(p["id"], 0),
        }
        for p in found.get("products", [])
    ]
    return json.dumps(
        {
            "category": category,
            "total_found": found.get("total_found", 0),
            "products": products,
            "top10_popular_ids": top10,
            "server_type": SERVER_TYPE,
        }
    )


async def get_user_cart(http: aiohttp.ClientSession, store: redis.Redis, user_id: str) -> str:
    """A user's cart, its first product's details and the five latest orders."""
    cart = await store.hgetall(f"bench:cart:{user_id}")
    items = json.loads(cart.get("items", "[]"))
    first = items[0]["product_id"] if items else 1
    product, history = await asyncio.gather(
        _get_json(http, f"/products/{first}"),
        store.lrange(f"bench:history:{user_id}", 0, 4),
    )
    return json.dumps(
        {
            "user_id": user_id,
            "cart": {
                "items": items,
                "item_count": len(items),
                "estimated_total": float(cart.get("total", 0)),
                "first_product": product.get("name"),
            },
            "recent_history": [json.loads(entry) for entry in history],
            "server_type": SERVER_TYPE,
        }
    )


async def checkout(
    http: aiohttp.ClientSession,
    store: redis.Redis,
    user_id: str,
    items: list[dict[str, Any]] | None,
) -> str:
    """Price an order, count it against the user's rate limit, record it and the product's
    popularity: one API call and three Redis writes at once."""
    items = items or DEFAULT_ITEMS
    number = int(user_id.split("-")[1]) if "-" in user_id else 42
    now = int(time.time())
    order = json.dumps({"order_id": f"ORD-{user_id}-{now}", "items": items, "ts": now})
    priced, count, _, _ = await asyncio.gather(
        _post_json(http, "/cart/calculate", {"user_id": user_id, "items": items}),
        store.incr(f"bench:ratelimit:user-{number % 100:05d}"),
        store.rpush(f"bench:history:{user_id}", order),
        store.zadd("bench:popular", {f"product:{items[0]['product_id']}": 1}, incr=True),
    )
    return json.dumps(
        {
            "order_id": priced.get("order_id"),
            "user_id": user_id,
            "total": priced.get("total", 0),
            "items_count": len(items),
            "rate_limit_count": count,
            "status": "confirmed",
            "server_type": SERVER_TYPE,
        }
    )
