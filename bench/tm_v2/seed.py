"""Redis as TM Dev Lab's benchmark v2 seeds it: 10,000 carts, 1,000 order histories of 20
entries, a 100,000-member popularity ranking and 100 rate-limit counters."""

from __future__ import annotations

import json

import redis.asyncio as redis


async def seed(url: str) -> None:
    store = redis.Redis.from_url(url)
    try:
        await store.flushdb()
        pipe = store.pipeline(transaction=False)
        for n in range(1, 10_001):
            items = [
                {"product_id": (n * 7) % 100_000 + 1, "qty": 1 + n % 3},
                {"product_id": (n * 13) % 100_000 + 1, "qty": 1 + n % 2},
            ]
            if n % 3 == 0:
                items.append({"product_id": (n * 17) % 100_000 + 1, "qty": 1})
            total = sum(i["qty"] * (((i["product_id"] * 100) % 9_999) + 1) / 100 for i in items)
            pipe.hset(
                f"bench:cart:user-{n:05d}",
                mapping={
                    "user_id": f"user-{n:05d}",
                    "items": json.dumps(items),
                    "total": f"{total:.2f}",
                },
            )
        for n in range(1, 1_001):
            pipe.rpush(
                f"bench:history:user-{n:05d}",
                *(
                    json.dumps(
                        {
                            "order_id": f"ORD-{n:05d}-{j:02d}",
                            "product_id": (n * j * 7) % 100_000 + 1,
                            "ts": 1_740_000_000 + j,
                        }
                    )
                    for j in range(1, 21)
                ),
            )
        for start in range(1, 100_001, 10_000):
            pipe.zadd(
                "bench:popular",
                {f"product:{i}": i * 7 % 10_000 for i in range(start, start + 10_000)},
            )
        for n in range(1, 101):
            pipe.set(f"bench:ratelimit:user-{n:05d}", 0)
        await pipe.execute()
    finally:
        await store.aclose()
