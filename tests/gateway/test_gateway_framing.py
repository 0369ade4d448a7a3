"""No child lost to one bad line: what a stdio child writes goes through the servers' own
frame decoder, so a stray header line, an unusable one or a message over the cap costs one
message (logged, and the request it answered fails saying why), and a child whose
connection breaks is restarted. Real gateway subprocess, real child processes."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from codex_mcp.client import CallToolResult, McpError

from .gateway_helpers import PY, SERVERS, Lines, gateway, status, stdio, until, write_config

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Linux /proc")
CHILD = [PY, str(SERVERS / "framing_child.py")]


def text(result: CallToolResult) -> str:
    return str(result.content[0]["text"])


@pytest.mark.parametrize(
    ("tool", "answer"),
    [("stray_header", "after the stray header"), ("bad_header", "after the bad header")],
)
async def test_a_header_line_from_a_child_costs_only_itself(
    tmp_path: Path, tool: str, answer: str
) -> None:
    """A `Content-Length: 12` debug print swallowed everything after it (every call hung);
    `Content-Length: abc` cut the child for good."""
    config = write_config(tmp_path, {"f": stdio(CHILD)})
    errlog = Lines()
    async with gateway(config, errlog=errlog) as client:
        pid = (await status(client))["f"]["pid"]
        result = await client.call_tool(f"f__{tool}", {}, retries=0, timeout=10)
        assert text(result) == answer
        assert text(await client.call_tool("f__pid", {}, retries=0, timeout=10)) == str(pid)
        await errlog.wait_for(r"dropped a bad frame from .*framing_child.*Content-Length")
        assert (await status(client))["f"]["state"] == "ready"


@pytest.mark.parametrize("tool", ["big", "big_id_last"])
async def test_a_result_over_the_cap_fails_its_call_and_says_how_to_raise_it(
    tmp_path: Path, tool: str
) -> None:
    """It used to cut the child (never restarted), saying "closed its stdout" and
    "retryable". Now the call fails naming the limit and the setting; the child stays."""
    config = write_config(tmp_path, {"f": stdio(CHILD)})
    env = {"CODEX_MCP_MAX_MESSAGE_BYTES": str(1 << 20)}
    async with gateway(config, env=env) as client:
        pid = (await status(client))["f"]["pid"]
        with pytest.raises(McpError) as raised:
            await client.call_tool(f"f__{tool}", {"bytes": 2 << 20}, retries=0, timeout=20)
        message = raised.value.message
        assert "1048576" in message and "CODEX_MCP_MAX_MESSAGE_BYTES" in message, message
        assert raised.value.data["retryable"] is False
        small = await client.call_tool(f"f__{tool}", {"bytes": 1000}, retries=0, timeout=10)
        assert text(small) == "x" * 1000
        assert text(await client.call_tool("f__pid", {}, retries=0, timeout=10)) == str(pid)


async def test_a_large_result_passes_whole(tmp_path: Path) -> None:
    """Over the client's old 64 MiB cap; reassembled in one pass."""
    config = write_config(tmp_path, {"f": stdio(CHILD)})
    size = 65 << 20
    async with gateway(config) as client:
        result = await client.call_tool("f__big", {"bytes": size}, retries=0, timeout=120)
        assert len(text(result)) == size


async def test_a_child_whose_connection_broke_is_restarted(tmp_path: Path) -> None:
    """It exits 0 on the stdin EOF we send it: the on-failure policy used to leave its tools
    gone until the gateway restarted."""
    config = write_config(tmp_path, {"f": stdio(CHILD, restart={"backoff_initial_sec": 0.2})})
    async with gateway(config) as client:
        pid = (await status(client))["f"]["pid"]
        with pytest.raises(McpError) as raised:
            await client.call_tool("f__close_stdout", {}, retries=0, timeout=20)
        assert "closed its stdout" in raised.value.message

        async def restarted() -> bool:
            found = (await status(client))["f"]
            return found["state"] == "ready" and found["pid"] not in (None, pid)

        await until(restarted, timeout=30)
        assert text(await client.call_tool("f__pid", {}, retries=0, timeout=10)) != str(pid)
