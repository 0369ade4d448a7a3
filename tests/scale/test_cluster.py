"""Sessions on a Redis Cluster (`redis+cluster://`): made on one replica, served by another,
each session's keys in one hash slot ({session} tags) and the sessions spread over the
nodes. (Every other scale test runs on the Cluster as well: conftest.redis_server.)"""

from __future__ import annotations

import collections
from collections.abc import Iterator
from pathlib import Path

import aiohttp
import pytest
from http_helpers import call, open_session, text_of
from scale_setup import RedisServer, Replicas
from test_shared_sessions import JSON_ONLY
from topologies import ClusterServer, backend, backend_params


@pytest.fixture(params=backend_params("cluster"))
def redis_server(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[RedisServer]:
    with backend(request.param, tmp_path) as server:
        yield server  # type: ignore[misc]


@pytest.mark.slow
async def test_sessions_made_on_one_replica_are_served_by_another_and_spread_over_nodes(
    replicas: Replicas, redis_server: ClusterServer
) -> None:
    a, b = replicas(2)
    async with aiohttp.ClientSession() as http:
        sessions = [await open_session(http, a.url) for _ in range(12)]
        for index, session in enumerate(sessions):
            body = call(index, "whoami", {})
            async with http.post(b.url, json=body, headers=session) as response:
                assert response.status == 200 and text_of(await response.json()) == str(b.pid)
            # Standalone events: the session's stream and counter keys too.
            tag = {"count": 1, "tag": f"s{index}"}
            async with http.post(b.url, json=call(100 + index, "emit", tag),
                                 headers={**session, **JSON_ONLY}) as response:  # fmt: skip
                assert response.status == 200
    ids = [s["Mcp-Session-Id"] for s in sessions]
    held = redis_server.keys()
    where: dict[str, set[int]] = collections.defaultdict(set)
    kinds: dict[str, set[str]] = collections.defaultdict(set)
    for port, keys in held.items():
        for key in keys:
            for sid in ids:
                if key.endswith("{" + sid + "}"):
                    where[sid].add(port)
                    kinds[sid].add(key.split(":")[1])
    assert set(where) == set(ids), held
    assert all(len(ports) == 1 for ports in where.values()), where  # one slot each
    assert all({"s", "e", "q"} <= k for k in kinds.values()), kinds
    assert len({next(iter(p)) for p in where.values()}) >= 2, where  # spread over nodes
