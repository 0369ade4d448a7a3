"""One tool whose schema nests too deep for the repairs (or for the JSON encoder) costs only
itself: the child's other tools are served, and the log says which tool was left out."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from .gateway_helpers import BROKEN, Lines, gateway, stdio, write_config


def nested(depth: int) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": "string"}
    for _ in range(depth):
        schema = {"type": "object", "properties": {"inner": schema}}
    return schema


async def test_a_tool_nested_250_levels_costs_only_itself(tmp_path: Path) -> None:
    deep = {"name": "deep", "description": "nested far too deep", "inputSchema": nested(250)}
    config = write_config(
        tmp_path,
        {"brk": stdio(BROKEN, "--tools", "echo", "--custom-tools", json.dumps([deep]))},
    )
    errlog = Lines()
    async with gateway(config, errlog=errlog) as client:
        names = {tool.name for tool in await client.list_tools()}
        assert "brk__echo" in names and "brk__deep" not in names
        result = await client.call_tool("brk__echo", {"message": "still here"})
        assert "still here" in json.dumps(result.content)
        await errlog.wait_for(r"brk: a tool is left out: .*deep.*nest")
