"""The listing cache as hostile input: each child's kept tool listing is a file any local
process of the user can write (listing_cache.py). Valid JSON of the wrong shape, nested
100,000 deep, huge, not UTF-8, a FIFO, a directory, a second process rewriting it while the
gateway reads it, two gateways writing it at once.

What must hold: reading it never fails the gateway (it starts, lists and calls every child),
a bad one costs one log line and is rewritten by the child's next good listing, and writers
that race converge on a whole file. Real gateway subprocesses, real children."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from codex_mcp.codex_compat.client import codex_client_capabilities
from codex_mcp.gateway.children.listing_cache import ListingCache, cache_directory
from codex_mcp.gateway.config.load import read_config

from .gateway_helpers import BROKEN, Lines, gateway, stdio, until, write_config

DEEP = 100_000
#: Larger than any kept listing the reader takes.
HUGE = 40 * 1024 * 1024


def _deep_schema(levels: int) -> dict[str, object]:
    schema: dict[str, object] = {"type": "object"}
    for _ in range(levels):
        schema = {"type": "object", "properties": {"x": schema}}
    return schema


#: What a hostile or broken writer leaves where a kept listing belongs, by server name.
BAD: dict[str, bytes | str | None] = {
    "list": "[]",
    "string": '"x"',
    "number": "5",
    "null": "null",
    "deep_arrays": "[" * DEEP + "]" * DEEP,
    "deep_objects": '{"a":' * 1100 + "1" + "}" * 1100,
    "deep_tools": '{"format": 1, "tools": ' + "[" * DEEP + "]" * DEEP + "}",
    "tools_string": '{"format": 1, "tools": "x"}',
    "format_string": '{"format": "1", "tools": []}',
    "capabilities_list": '{"format": 1, "tools": [], "capabilities": ["tools"]}',
    "items": json.dumps(
        {
            "format": 1,
            "tools": [
                5,
                "x",
                None,
                [],
                {"name": 5},
                {"name": "echo", "inputSchema": []},
                {"name": "deep", "inputSchema": _deep_schema(300)},
            ],
        }
    ),
    "huge": '{"format": 1, "tools": [{"name": "echo", "description": "' + "x" * HUGE + '"}]}',
    "not_utf8": b'{"format": 1, "tools": [{"name": "\xff\xfe"}]}',
    "fifo": None,
    "directory": None,
}


def _cache_paths(config: Path) -> dict[str, Path]:
    """Where the gateway keeps each server's listing (what its key says)."""
    cache = ListingCache(cache_directory())
    capabilities = codex_client_capabilities()
    return {s.name: cache.path(s, capabilities) for s in read_config(config).servers}


def _plant(path: Path, content: bytes | str | None, name: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    if name == "fifo":
        os.mkfifo(path)  # a reader that opens it blocks until someone writes: never
    elif name == "directory":
        path.mkdir()
        (path / "inside").write_text("{}")
    elif isinstance(content, bytes):
        path.write_bytes(content)
    else:
        assert content is not None
        path.write_text(content)


def _kept_tools(path: Path) -> list[str] | None:
    """The tool names a kept listing holds, when it is a whole, good one."""
    try:
        document = json.loads(path.read_text())
    except (OSError, ValueError):
        return None
    tools = document.get("tools") if isinstance(document, dict) else None
    return [tool.get("name") for tool in tools] if isinstance(tools, list) else None


@pytest.mark.slow
async def test_a_bad_kept_listing_is_ignored_said_once_and_rewritten(tmp_path: Path) -> None:
    config = write_config(
        tmp_path, {name: stdio(BROKEN, "--tools", "echo", "--name", name) for name in BAD}
    )
    paths = _cache_paths(config)
    assert len(set(paths.values())) == len(BAD)
    for name, content in BAD.items():
        _plant(paths[name], content, name)
    errlog = Lines()
    async with gateway(config, errlog=errlog) as client:
        expected = {f"{name}__echo" for name in BAD}
        # A directory in its place is never deleted: that listing is not kept.
        rewritable = [name for name in BAD if name != "directory"]

        async def all_listed() -> bool:
            names = {tool.name for tool in await client.list_tools(cache=False)}
            return expected <= names

        try:
            await until(all_listed, timeout=60)
        except TimeoutError:
            raise AssertionError(f"not listed: {errlog.text()[-3000:]}") from None
        for name in BAD:
            result = await client.call_tool(f"{name}__echo", {"message": name}, retries=0)
            assert result.text == name
        try:
            await until(lambda: all(_kept_tools(paths[n]) == ["echo"] for n in rewritable), 60)
        except TimeoutError:
            left = {name: _kept_tools(path) for name, path in paths.items()}
            raise AssertionError(f"not rewritten: {left}\n{errlog.text()[-3000:]}") from None
    text = errlog.text()
    assert "Traceback" not in text, text[-3000:]
    for name in BAD:
        said = [line for line in errlog.lines if f"gateway: {name}: its kept tool listing" in line]
        assert len(said) == 1, (name, said, text[-3000:])
    assert not list(paths["list"].parent.glob("*.tmp"))
    assert (paths["directory"] / "inside").read_text() == "{}"


_WRITER = """
import os, sys, time
path, stop = sys.argv[1], sys.argv[2]
bad = ['[]', '"x"', '[' * 100000, '{"format": 1, "tools": [{"name": "intruder"}]}',
       '{"format": 1, "tools": [' + '{"name": "x"},' * 20000 + '{"name": "y"}]}']
n = 0
while not os.path.exists(stop):
    text = bad[n % len(bad)]
    n += 1
    with open(path, "w") as file:  # not atomic: a reader may see any prefix
        for at in range(0, len(text), 4096):
            file.write(text[at:at + 4096])
            file.flush()
print(n)
"""


@pytest.mark.slow
async def test_a_second_process_rewriting_the_cache_never_fails_the_gateway(
    tmp_path: Path,
) -> None:
    config = write_config(tmp_path, {"one": stdio(BROKEN, "--tools", "echo")})
    path = _cache_paths(config)["one"]
    path.parent.mkdir(parents=True, exist_ok=True)
    stop = tmp_path / "stop"
    writer = subprocess.Popen(
        [sys.executable, "-c", _WRITER, str(path), str(stop)], stdout=subprocess.PIPE, text=True
    )
    try:
        for _ in range(3):
            errlog = Lines()
            async with gateway(config, errlog=errlog) as client:
                result = await client.call_tool("one__echo", {"message": "hi"}, retries=0)
                assert result.text == "hi"
            assert "Traceback" not in errlog.text(), errlog.text()[-3000:]
    finally:
        stop.touch()
        out, _ = writer.communicate(timeout=30)
    assert int(out) > 3  # it kept writing while the gateways read
    # Once the writer is gone, the next gateway's listing makes the file whole again.
    async with gateway(config) as client:
        assert (await client.call_tool("one__echo", {"message": "x"}, retries=0)).text == "x"
        await until(lambda: _kept_tools(path) == ["echo"])


@pytest.mark.slow
async def test_two_gateways_writing_one_cache_converge(tmp_path: Path) -> None:
    config = write_config(
        tmp_path, {f"s{i}": stdio(BROKEN, "--tools", "echo", "--name", f"s{i}") for i in range(4)}
    )
    paths = _cache_paths(config)

    async def one_gateway(word: str) -> None:
        async with gateway(config) as client:
            for name in paths:
                result = await client.call_tool(f"{name}__echo", {"message": word}, retries=0)
                assert result.text == word

    for _ in range(2):
        await asyncio.gather(one_gateway("a"), one_gateway("b"))
    assert all(_kept_tools(path) == ["echo"] for path in paths.values())
    assert not list(paths["s0"].parent.glob("*.tmp"))
