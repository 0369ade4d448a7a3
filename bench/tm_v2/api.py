"""The product API of TM Dev Lab's benchmark v2, stood in for by aiohttp on 127.0.0.1:
100,000 products made by formula (so nothing is stored but a price index per category),
searched by category and price, fetched by id, and priced as a cart.

    python bench/tm_v2/api.py PORT
"""

from __future__ import annotations

import bisect
import sys
from typing import Any

import orjson
from aiohttp import web

PRODUCTS = 100_000
CATEGORIES = [
    "Electronics", "Books", "Clothing", "Sports", "Home", "Garden", "Toys", "Food", "Beauty",
    "Automotive", "Music", "Movies", "Games", "Office", "Health", "Pets", "Travel", "Tools",
    "Jewelry", "Baby",
]  # fmt: skip
BRANDS = [f"Brand{n:02d}" for n in range(50)]
TAGS = ["sale", "new", "featured", "bestseller", "clearance", "limited", "popular", "exclusive"]


def price_of(index: int) -> float:
    return 1.0 + (index % 99_900) / 100.0


def product(index: int) -> dict[str, Any]:
    """Product `index + 1`, the same on every call."""
    category, brand = CATEGORIES[index % 20], BRANDS[index % 50]
    return {
        "id": index + 1,
        "sku": f"SKU-{index + 1:06d}",
        "name": f"{brand} {category} Item {index + 1}",
        "category": category,
        "brand": brand,
        "price": price_of(index),
        "stock": index % 501,
        "rating": 1.0 + (index % 40) / 10.0,
        "tags": [TAGS[(index + j) % 8] for j in range(2 + index % 3)],
        "weight": round((1 + index % 100) * 0.1, 2),
        "description": f"Quality {category} by {brand}. SKU {index + 1:06d}.",
    }


#: Per category: its products' (price, index), by price.
BY_PRICE = {
    category: sorted((price_of(i), i) for i in range(offset, PRODUCTS, 20))
    for offset, category in enumerate(CATEGORIES)
}


def reply(value: Any) -> web.Response:
    return web.Response(body=orjson.dumps(value), content_type="application/json")


async def search(request: web.Request) -> web.Response:
    query = request.query
    category = query.get("category", "Electronics")
    low = float(query.get("min_price") or 0)
    high = float(query.get("max_price") or "inf")
    limit = int(query.get("limit") or 10)
    limit = limit if 0 < limit <= 1000 else 10
    ranked = BY_PRICE.get(category, [])
    first = bisect.bisect_left(ranked, (low, -1))
    last = bisect.bisect_right(ranked, (high, PRODUCTS))
    chosen = [product(index) for _, index in ranked[first : min(last, first + limit)]]
    return reply({"category": category, "total_found": last - first, "products": chosen})


async def one_product(request: web.Request) -> web.Response:
    try:
        number = int(request.match_info["id"])
    except ValueError:
        raise web.HTTPNotFound() from None
    if not 1 <= number <= PRODUCTS:
        raise web.HTTPNotFound()
    return reply(product(number - 1))


async def calculate(request: web.Request) -> web.Response:
    body = orjson.loads(await request.read())
    items = body.get("items") or []
    subtotal = round(
        sum(
            price_of(item["product_id"] - 1) * item["quantity"]
            for item in items
            if 1 <= item["product_id"] <= PRODUCTS
        ),
        2,
    )
    tax = round(subtotal * 0.085, 2)
    discount, shipping = (round(subtotal * 0.10, 2), 0.0) if subtotal >= 100 else (0.0, 5.99)
    user = str(body.get("user_id", ""))
    return reply(
        {
            "order_id": f"ORD-{user.replace('-', '')}-{len(items)}",
            "user_id": user,
            "subtotal": subtotal,
            "tax": tax,
            "shipping": shipping,
            "discount": discount,
            "total": round(subtotal + tax + shipping - discount, 2),
            "items_count": len(items),
        }
    )


async def health(_: web.Request) -> web.Response:
    return reply({"status": "ok"})


def app() -> web.Application:
    application = web.Application()
    application.router.add_get("/products/search", search)
    application.router.add_get("/products/{id}", one_product)
    application.router.add_post("/cart/calculate", calculate)
    application.router.add_get("/health", health)
    return application


if __name__ == "__main__":
    web.run_app(app(), host="127.0.0.1", port=int(sys.argv[1]), access_log=None, print=None)
