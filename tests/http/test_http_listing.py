"""tools/list over HTTP: each page of a listing is encoded once and then sent as it is,
until the listing changes (a tool added or removed, a provider's list_changed), and a
stateless tools/call finds its tool's Mcp-Param headers in an index made once per listing."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import aiohttp
import orjson
import pytest
from codex_mcp import Server
from codex_mcp.core.jsonrpc import JsonObject
from codex_mcp.core.provider import Provider
from codex_mcp.core.server import ServerCore
from http_helpers import open_session
from served import served


class Encodings:
    """Counts the pages pagination encodes (it alone makes orjson Fragments)."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.count = 0
        made = orjson.Fragment

        def fragment(data: bytes) -> Any:
            self.count += 1
            return made(data)

        monkeypatch.setattr(orjson, "Fragment", fragment)


async def list_all(http: aiohttp.ClientSession, url: str, session: dict[str, str]) -> list[str]:
    names: list[str] = []
    cursor = None
    for request_id in range(100, 120):
        params = {"cursor": cursor} if cursor else {}
        message = {"jsonrpc": "2.0", "id": request_id, "method": "tools/list", "params": params}
        async with http.post(url, json=message, headers=session) as response:
            result = (await response.json())["result"]
        names += [tool["name"] for tool in result["tools"]]
        cursor = result.get("nextCursor")
        if cursor is None:
            return names
    raise AssertionError("the pages never ended")


def numbered(index: int) -> Any:
    def tool(message: str) -> str:
        return f"{index}: {message}"

    return tool


async def test_pages_are_encoded_once_until_the_tools_change(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    encodings = Encodings(monkeypatch)
    server = Server("listing", page_size=3)
    for index in range(5):
        server.add_tool(numbered(index), name=f"t{index}")
    async with served(server.core) as port, aiohttp.ClientSession() as http:
        url = f"http://127.0.0.1:{port}/mcp"
        session = await open_session(http, url)
        first = [f"t{index}" for index in range(5)]
        assert await list_all(http, url, session) == first
        assert encodings.count == 2  # two pages
        for _ in range(3):
            assert await list_all(http, url, session) == first
        assert encodings.count == 2  # sent as they were encoded
        server.add_tool(numbered(5), name="t5")
        assert await list_all(http, url, session) == [*first, "t5"]
        server.remove_tool("t0")
        assert await list_all(http, url, session) == [*first[1:], "t5"]
        assert await list_all(http, url, session) == [*first[1:], "t5"]
        assert encodings.count == 6


class InPlace(Provider):
    """Keeps one list and changes it in place, announcing each change."""

    features = frozenset({"tools"})  # type: ignore[assignment]

    def __init__(self) -> None:
        super().__init__()
        self.tools: list[JsonObject] = [{"name": "a", "inputSchema": {"type": "object"}}]

    async def list_tools(self, ctx: Any) -> Sequence[JsonObject]:
        return self.tools


async def test_a_listing_changed_in_place_and_announced_is_sent_afresh() -> None:
    provider = InPlace()
    core = ServerCore(provider, name="in-place", version="1")
    async with served(core) as port, aiohttp.ClientSession() as http:
        url = f"http://127.0.0.1:{port}/mcp"
        session = await open_session(http, url)
        assert await list_all(http, url, session) == ["a"]
        provider.tools[0] = {"name": "b", "inputSchema": {"type": "object"}}
        provider.notify_list_changed("tools")
        assert await list_all(http, url, session) == ["b"]
        provider.tools.append({"name": "c", "inputSchema": {"type": "object"}})
        provider.notify_list_changed("tools")
        assert await list_all(http, url, session) == ["b", "c"]
