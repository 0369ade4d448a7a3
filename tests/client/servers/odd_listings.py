"""A stdio MCP server (newline-delimited JSON) whose listings are out of shape, as a careless
or hostile server's may be: items that are not objects, fields of the wrong type, prompt
arguments that are not a list, and a `resources/list` cursor that leads back to itself.
With `--endless`, every listing hands out one item and a new cursor, forever."""

from __future__ import annotations

import json
import sys

LISTINGS: dict[str, dict[str, object]] = {
    "resources/list": {
        "resources": [
            "not an object",
            {"uri": "odd://a", "name": "a", "size": True, "mimeType": 7, "annotations": []},
            {"uri": 42, "name": ["x"], "title": {"t": 1}, "size": 10},
        ],
        "nextCursor": "again",  # the same cursor every time: paging must end
    },
    "resources/templates/list": {
        "resourceTemplates": [{"uriTemplate": "odd://{x}", "name": "x"}, None, 3],
        "nextCursor": 5,
    },
    "prompts/list": {
        "prompts": [
            {"name": "p", "arguments": "not a list"},
            {"name": "q", "arguments": [1, {"name": "n", "required": "yes"}, {"name": 9}]},
            [],
        ]
    },
    "tools/list": {"tools": [{"name": "t", "inputSchema": []}]},
}


def endless(method: str, params: dict[str, object]) -> dict[str, object]:
    page = int(str(params.get("cursor") or 0))
    key = {"tools/list": "tools", "resources/list": "resources"}.get(method, "prompts")
    item = {"name": f"n{page}", "uri": f"odd://{page}", "inputSchema": {"type": "object"}}
    return {key: [item], "nextCursor": str(page + 1)}


def main() -> None:
    for line in sys.stdin:
        message = json.loads(line)
        method, request_id = message.get("method"), message.get("id")
        if request_id is None:
            continue
        if method == "initialize":
            result: object = {
                "protocolVersion": message["params"]["protocolVersion"],
                "capabilities": {"tools": {}, "resources": {}, "prompts": {}},
                "serverInfo": {"name": "odd-listings", "version": "1"},
            }
        elif method in LISTINGS:
            params = message.get("params") or {}
            result = endless(method, params) if "--endless" in sys.argv else LISTINGS[method]
        else:
            error = {"code": -32601, "message": "no"}
            print(json.dumps({"jsonrpc": "2.0", "id": request_id, "error": error}), flush=True)
            continue
        print(json.dumps({"jsonrpc": "2.0", "id": request_id, "result": result}), flush=True)


if __name__ == "__main__":
    main()
