"""What the memory tests send: a streamed tool call whose progress token is its id."""

from __future__ import annotations

from typing import Any


def tool_call(request_id: int, name: str, **arguments: Any) -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "id": request_id,
        "method": "tools/call",
        "params": {"name": name, "arguments": arguments, "_meta": {"progressToken": request_id}},
    }
