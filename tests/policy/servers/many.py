"""A server listing many tools (`tool_0` .. `tool_399`): a listing the policy's hook is
asked about item by item (tests/policy/test_hostile_hook_fanout.py)."""

from __future__ import annotations

from codex_mcp import Server

#: How many tools it lists.
COUNT = 400

server = Server("policy-many")


def _answer() -> str:
    return "called tool"


for number in range(COUNT):
    server.add_tool(_answer, name=f"tool_{number}", read_only=True)

if __name__ == "__main__":
    server.run()
