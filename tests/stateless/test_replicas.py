"""Two server processes behind a round-robin nginx on loopback serve one 2026-07-28
client's requests interchangeably: an input-required round started on one process is
finished on the other, because both hold the same request-state key."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from codex_mcp.client import Client, McpError
from nginx_proxy import NGINX, NginxProxies, upstream

REPLICA = str(Path(__file__).parent / "servers/replica.py")
KEY = "replicas-share-this-request-state-key-0123456789"

pytestmark = pytest.mark.skipif(NGINX is None, reason="nginx not installed: apt-get install nginx")


@pytest.fixture
def round_robin(tmp_path: Path) -> Iterator[Callable[[list[str]], str]]:
    """`round_robin([upstream base URLs])`: nginx on a free loopback port sending each
    request to the next upstream in turn; returns the proxied /mcp URL."""
    with NginxProxies(tmp_path) as proxies:

        def start(upstreams: list[str]) -> str:
            return proxies.start(
                upstream("replicas", upstreams) + "  server {\n"
                "    listen 127.0.0.1:{port};\n"
                "    location / {\n"
                "      proxy_pass http://replicas;\n"
                "      proxy_http_version 1.1;\n"
                "      proxy_set_header Host $host;\n"
                "    }\n"
                "  }\n"
            )

        yield start


def replicas(launch_http: Any, *args: str) -> list[str]:
    return [launch_http("--serve", REPLICA, *args).removesuffix("/mcp") for _ in range(2)]


async def answer_name(params: Any) -> Any:
    return {"action": "accept", "content": {"name": "Rhea"}}


async def test_one_modern_client_served_by_two_replicas(
    launch_http: Any, round_robin: Callable[[list[str]], str]
) -> None:
    url = round_robin(replicas(launch_http, "--request-state-keys", KEY))
    async with Client.http(url, mode="2026-07-28", elicitation_handler=answer_name) as client:
        pids = {(await client.call_tool("whoami")).text for _ in range(4)}
        assert len(pids) == 2  # both replicas served this client
        for _ in range(2):  # a round each way
            text = (await client.call_tool("ask_across")).text
            name, asked, answered = (
                text.split(" asked by ")[0],
                *text.split(" asked by ")[1].split(", answered to "),
            )
            assert name == "Rhea"
            assert {asked, answered} == pids  # started on one process, finished on the other


async def test_without_a_shared_key_a_round_cannot_cross(
    launch_http: Any, round_robin: Callable[[list[str]], str]
) -> None:
    url = round_robin(replicas(launch_http))  # each process signs with its own random key
    async with Client.http(url, mode="2026-07-28", elicitation_handler=answer_name) as client:
        with pytest.raises(McpError) as refused:
            await client.call_tool("ask_across", retries=0)
        assert refused.value.code == -32602
        assert refused.value.data == {"reason": "tampered"}  # not a key of this process
