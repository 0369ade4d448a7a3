"""A dual-revision server on the official Python SDK (mcp 2.3), standing in for the SDK's
everything server (conformance fixtures): over stdio it speaks the revision its client
opens with. `test_input_required_result_list_roots` asks for the client's roots with an
input-required result (2026-07-28 only: under `initialize`, the SDK refuses the handler's
result); `test_simple_text` answers plainly in both."""

from __future__ import annotations

from typing import Any

import mcp_types as types
from mcp.server.mcpserver import Context, MCPServer

server = MCPServer("sdk-everything")


@server.tool()
def test_simple_text() -> str:
    """Plain text, in either revision."""
    return "This is a simple text response for testing."


@server.tool()
async def test_input_required_result_list_roots(
    ctx: Context[Any, Any],
) -> str | types.InputRequiredResult:
    """The client's roots, asked with an input-required round."""
    answer = (ctx.input_responses or {}).get("roots")
    if answer is None:
        return types.InputRequiredResult(
            input_requests={"roots": types.ListRootsRequest(method="roots/list")}
        )
    roots = answer.get("roots", []) if isinstance(answer, dict) else getattr(answer, "roots", [])
    return f"Client exposed {len(roots)} root(s)"


if __name__ == "__main__":
    server.run()
