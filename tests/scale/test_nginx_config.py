"""deploy/nginx/codex-mcp.conf, as shipped (only its replica lines and port replaced):
a session's requests stay on one replica while it lives, sessions spread over the
replicas, and a session whose replica dies goes on on another."""

from __future__ import annotations

import os
import signal
from typing import Any

import aiohttp
import pytest
from http_helpers import call, open_session, text_of
from nginx_proxy import shipped_config
from scale_setup import Replicas


def rendered(replicas: list[Any]) -> str:
    """The shipped file with our replicas and a {port} to listen on."""
    return shipped_config([r.base for r in replicas])


async def whoami(http: aiohttp.ClientSession, url: str, session: dict[str, str], n: int) -> str:
    async with http.post(url, json=call(n, "whoami", {}), headers=session) as response:
        assert response.status == 200, await response.text()
        return text_of(await response.json())


@pytest.mark.slow
async def test_the_shipped_config_keeps_a_session_on_its_replica(
    replicas: Replicas, nginx: Any
) -> None:
    group = replicas(3)
    url = nginx(rendered(group))
    async with aiohttp.ClientSession() as http:
        sessions = [await open_session(http, url) for _ in range(12)]
        homes = []
        for session in sessions:
            served = {await whoami(http, url, session, n) for n in range(5)}
            assert len(served) == 1  # affinity: one replica per session
            homes.append(served.pop())
        assert len(set(homes)) >= 2  # and the sessions spread over the replicas

        session, home = sessions[0], homes[0]
        victim = next(r for r in group if str(r.pid) == home)
        os.kill(victim.pid, signal.SIGKILL)
        victim.process.wait(10)
        moved = {await whoami(http, url, session, 100 + n) for n in range(5)}
        assert len(moved) == 1 and home not in moved  # the session goes on elsewhere
