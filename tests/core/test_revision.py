"""A request's era is asked of its context (`ctx.revision`), never guessed from the context's
class or attributes: a session's request after initialize is LEGACY, a request carrying the
2026-07-28 envelope is STATELESS on the same session (dual era) and on a stateless HTTP peer."""

from __future__ import annotations

from collections.abc import Hashable
from typing import Any

from codex_mcp import Context, Server
from codex_mcp.core.versions import Revision

ENVELOPE = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {},
    "io.modelcontextprotocol/clientInfo": {"name": "t", "version": "1"},
}


class Sent(list[Any]):
    def send(self, message: Any, related: Hashable = None) -> None:
        self.append(message)


def _call(request_id: int, meta: dict[str, Any] | None = None) -> dict[str, Any]:
    params: dict[str, Any] = {"name": "era", "arguments": {}}
    if meta is not None:
        params["_meta"] = meta
    return {"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": params}


async def test_each_request_says_its_era() -> None:
    server = Server("eras")
    seen: list[Revision] = []

    @server.tool()
    async def era(ctx: Context) -> str:
        seen.append(ctx.revision)
        return ctx.revision.value

    core = server.core
    sent = Sent()
    session = core.open_session(sent)
    session.receive({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {}})
    session.receive(_call(1))
    session.receive(_call(2, ENVELOPE))  # the same connection, the other era
    stateless = core.open_stateless(sent)
    stateless.receive(_call(3, ENVELOPE))
    assert seen == [Revision.LEGACY, Revision.STATELESS, Revision.STATELESS]
    texts = [m["result"]["content"][0]["text"] for m in sent if m.get("id") in (1, 2, 3)]
    assert texts == ["legacy", "stateless", "stateless"]
    await core.aclose()
