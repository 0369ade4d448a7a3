"""The revision the gateway speaks to a child follows the front's (issue 32): a dual-revision
child (the official Python SDK's server, which picks one revision per connection) answers a
2026-07-28 front through the gateway exactly as it answers that front directly, its own
input-required rounds relayed to the front, while a legacy front keeps the legacy session
(and the child's legacy answers). A child that speaks only the legacy revision serves
2026-07-28 fronts in it, as before. Real child processes, stdio and HTTP fronts."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from codex_mcp.client import Client, McpError

from .gateway_helpers import (
    BROKEN,
    CMD_MCP,
    EVERYTHING,
    MISSING_NPM,
    PY,
    ROOT,
    SERVERS,
    Lines,
    gateway,
    launch_http_gateway,
    stdio,
    stop,
    write_config,
)

MODERN = "2026-07-28"
SKILLS = "io.modelcontextprotocol/skills"
SDK_EVERYTHING = [PY, str(SERVERS / "sdk_everything.py")]
ROOTS = [{"uri": "file:///work", "name": "work"}]
LIST_ROOTS = "test_input_required_result_list_roots"


@pytest.fixture
def serve(tmp_path: Path) -> Iterator[Any]:
    processes = []

    def start(servers: dict[str, Any], *args: str) -> str:
        process, url = launch_http_gateway(write_config(tmp_path, servers), *args)
        processes.append(process)
        return url

    yield start
    for process in processes:
        stop(process)


async def _outcome(client: Client, tool: str) -> str:
    """What a call answers: its text, or its error's message."""
    try:
        result = await client.call_tool(tool, {}, retries=0)
    except McpError as error:
        return f"error: {error.message}"
    return result.text


async def _direct(mode: str) -> dict[str, str]:
    """The child's own answers to a front of `mode`, with no gateway between."""
    async with Client.stdio(SDK_EVERYTHING, mode=mode, roots=ROOTS, timeout=30) as client:
        return {tool: await _outcome(client, tool) for tool in (LIST_ROOTS, "test_simple_text")}


@pytest.mark.slow
async def test_a_dual_revision_child_answers_each_front_in_its_own_revision(
    tmp_path: Path,
) -> None:
    direct_modern = await _direct(MODERN)
    assert direct_modern[LIST_ROOTS] == "Client exposed 1 root(s)"
    direct_legacy = await _direct("legacy")
    assert "invalid result" in direct_legacy[LIST_ROOTS]  # the SDK's answer to a legacy client
    config = write_config(tmp_path, {"sdk": stdio(SDK_EVERYTHING)})
    async with gateway(config, mode=MODERN, roots=ROOTS) as modern:
        assert modern.session.stateless is not None
        for tool, answer in direct_modern.items():
            assert await _outcome(modern, f"sdk__{tool}") == answer, tool
        # again: the second connection stays, each round goes through it
        assert await _outcome(modern, f"sdk__{LIST_ROOTS}") == direct_modern[LIST_ROOTS]
    async with gateway(config, roots=ROOTS) as legacy:  # Codex's way: the legacy session
        assert legacy.session.stateless is None
        assert await _outcome(legacy, "sdk__test_simple_text") == direct_legacy["test_simple_text"]
        assert "invalid result" in await _outcome(legacy, f"sdk__{LIST_ROOTS}")


@pytest.mark.slow
@pytest.mark.parametrize("per_session", [False, True])
async def test_a_dual_revision_child_over_http(serve: Any, per_session: bool) -> None:
    url = serve({"sdk": stdio(SDK_EVERYTHING, per_session=per_session)})
    async with Client.http(url, mode=MODERN, roots=ROOTS) as modern:
        assert await _outcome(modern, f"sdk__{LIST_ROOTS}") == "Client exposed 1 root(s)"
    async with Client.http(url, roots=ROOTS) as legacy:
        assert "invalid result" in await _outcome(legacy, f"sdk__{LIST_ROOTS}")


@pytest.mark.slow
async def test_a_front_without_roots_is_told_so_by_the_child(tmp_path: Path) -> None:
    """The child's envelope carries the front's own capabilities, not the gateway's."""
    config = write_config(tmp_path, {"sdk": stdio(SDK_EVERYTHING)})
    async with gateway(config, mode=MODERN) as modern:  # declares no roots
        answer = await _outcome(modern, f"sdk__{LIST_ROOTS}")
    assert answer != "Client exposed 1 root(s)"
    assert "roots" in answer, answer


@pytest.mark.interop
@pytest.mark.slow
@pytest.mark.skipif(not EVERYTHING.exists(), reason=MISSING_NPM)
async def test_a_legacy_only_child_serves_a_2026_front_in_the_legacy_revision(
    tmp_path: Path,
) -> None:
    config = write_config(tmp_path, {"everything": stdio(EVERYTHING)})
    async with gateway(config, mode=MODERN) as modern:
        for _ in range(2):  # the refusal is remembered: the second call asks nothing more
            echoed = await modern.call_tool("everything__echo", {"message": "hi"}, retries=0)
            assert "hi" in echoed.text, echoed.text


ERA_ECHO = [PY, CMD_MCP, "--serve", str(ROOT / "tests/interop/servers/era_echo.py")]


@pytest.mark.slow
async def test_each_front_reaches_the_child_in_its_own_revision(tmp_path: Path) -> None:
    """Our own dual-revision server says which revision each request came in."""
    config = write_config(tmp_path, {"era": stdio(ERA_ECHO)})
    async with gateway(config, mode=MODERN) as modern, gateway(config) as legacy:
        for _ in range(2):
            stateless = await modern.call_tool("era__echo", {"message": "m"}, retries=0)
            assert stateless.text == "m [stateless 2026-07-28]", stateless.text
            session = await legacy.call_tool("era__echo", {"message": "l"}, retries=0)
            assert session.text.startswith("l [session 2025-"), session.text


@pytest.mark.slow
async def test_a_legacy_only_child_behind_a_2026_front_leaves_stderr_clean(
    tmp_path: Path,
) -> None:
    """Learning that a child speaks only the legacy revision is no failure: nothing is said
    of it on stderr (Codex shows those lines); before, each such child was logged as one
    that "could not start" and was "not restarted"."""
    lines = Lines()
    config = write_config(tmp_path, {"old": stdio(BROKEN, "--tools", "echo")})
    async with gateway(config, mode=MODERN, errlog=lines) as modern:
        for _ in range(2):
            echoed = await modern.call_tool("old__echo", {"message": "hi"}, retries=0)
            assert "hi" in echoed.text, echoed.text
    said = [line for line in lines.lines if " codex_mcp." in line]
    assert not said, said


@pytest.mark.slow
@pytest.mark.parametrize("mode", ["legacy", MODERN])
async def test_skills_are_declared_only_when_a_child_serves_them(tmp_path: Path, mode: str) -> None:
    """A child that serves no skills, up, or `lazy` and known from its kept listing: no
    skills extension is declared, to either revision (a 2026-07-28 front's discover once
    declared it while the child was starting)."""
    env = {"XDG_CACHE_HOME": str(tmp_path / "cache")}
    config = write_config(tmp_path, {"plain": stdio(BROKEN, "--tools", "echo")})
    async with gateway(config, mode=mode, env=env) as client:
        assert SKILLS not in client.server_capabilities.get("extensions", {})
        await client.list_tools()
    config = write_config(tmp_path, {"plain": stdio(BROKEN, "--tools", "echo", lazy=True)})
    async with gateway(config, mode=mode, env=env) as client:
        assert SKILLS not in client.server_capabilities.get("extensions", {})
