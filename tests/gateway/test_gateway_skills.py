"""Skills through the gateway (SEP-2640; specs/skills.md, "Through the gateway"): two
children serving a skill at the same URI are two skills, each in its server's namespace
(`skill://<server>/...`, the resource URIs' naming); skills/get and
resources/directory/read reach the child that owns the URI, and what a child serves still
verifies against its entry (the gateway rewrites URIs, never content). The official MCP
SDK client (raw requests: it has no skills API) and ours, over a real gateway subprocess
with our library servers as children."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

import anyio
import pytest
from codex_mcp.client import McpError
from codex_mcp.core.jsonrpc import INVALID_PARAMS
from support.sdk_skills import sdk_requests

from .codex_harness import CODEX, ToolCall, run_codex, stdio_server_toml
from .gateway_helpers import CMD_MCP, PY, gateway, gateway_env, status, stdio, write_config

ODD = Path(__file__).resolve().parents[1] / "client" / "servers" / "hostile_skills.py"
SKILLS_SERVER = str(Path(__file__).resolve().parents[1] / "server" / "servers" / "skills_server.py")
DOCS = "skill://docs/team/code-review/SKILL.md"
OTHER = "skill://other/team/code-review/SKILL.md"


@pytest.fixture
def config(tmp_path: Path) -> Path:
    folder = tmp_path / "skills" / "pdf-processing" / "templates"
    folder.mkdir(parents=True)
    (folder.parent / "SKILL.md").write_text(
        "---\nname: pdf-processing\ndescription: PDFs\n---\n# PDF\n"
    )
    (folder / "invoice.md").write_text("# Invoice\n")
    return write_config(
        tmp_path,
        {
            "docs": stdio([PY, SKILLS_SERVER, str(tmp_path / "skills")]),
            "other": stdio([PY, SKILLS_SERVER]),
        },
    )


@pytest.mark.parametrize("mode", ["legacy", "2026-07-28"])
async def test_our_client_loads_skills_of_two_children_through_the_gateway(
    config: Path, mode: str
) -> None:
    async with gateway(config, mode=mode) as client:
        assert client.skills_settings() == {"directoryRead": True}
        skills = await client.list_skills(all_pages=True)
        assert sorted(s.uri for s in skills) == [
            "skill://docs/pdf-processing/SKILL.md",
            DOCS,
            OTHER,
        ]
        for uri in (DOCS, OTHER):  # same skill in two children: two skills, each verified
            loaded = await client.load_skill(uri)
            assert loaded.skill.name == "code-review"
            template = f"{loaded.skill.root}/templates/comment.md"
            assert await client.read_skill_file(loaded, template) == b"**Finding**: ...\n"
        children = await client.read_directory("skill://docs/pdf-processing")
        assert [(c["uri"], c["mimeType"]) for c in children] == [
            ("skill://docs/pdf-processing/SKILL.md", "text/markdown"),
            ("skill://docs/pdf-processing/templates", "inode/directory"),
        ]
        for method, params in [
            ("skills/get", {"uri": "skill://nobody/team/code-review/SKILL.md"}),
            ("skills/get", {"uri": "skill://docs/team/code-review/SKILL.mdx"}),
            ("resources/directory/read", {"uri": "skill://docs/team/code-review/SKILL.md"}),
            ("resources/directory/read", {"uri": "skill://docs"}),
        ]:
            with pytest.raises(McpError) as raised:
                await client.request(method, params)
            assert raised.value.code == INVALID_PARAMS, (method, params)


async def test_the_sdk_client_reads_a_childs_skill_through_the_gateway(config: Path) -> None:
    from mcp.client import Client as SdkClient
    from mcp.client.stdio import StdioServerParameters

    list_skills, get_skill, read_directory, raw = sdk_requests()
    params = StdioServerParameters(command=PY, args=[CMD_MCP], env=gateway_env(config))
    async with SdkClient(params, mode="legacy") as sdk:
        with anyio.fail_after(60):
            extensions = sdk.server_capabilities.extensions or {}
            assert extensions["io.modelcontextprotocol/skills"] == {"directoryRead": True}
            listing = await sdk.session.send_request(list_skills(), raw)
            assert {s["uri"] for s in listing["skills"]} >= {DOCS, OTHER}
            entry: dict[str, Any] = (await sdk.session.send_request(get_skill(DOCS), raw))["skill"]
            assert entry["uri"] == DOCS and entry["frontmatter"]["name"] == "code-review"
            for file in entry["resources"]:
                assert file["uri"].startswith("skill://docs/team/code-review/")
                content = (await sdk.read_resource(file["uri"])).contents[0]
                data = content.text.encode()  # type: ignore[union-attr]
                assert (len(data), "sha256:" + hashlib.sha256(data).hexdigest()) == (
                    file["size"],
                    file["digest"],
                )
            folder = await sdk.session.send_request(
                read_directory("skill://docs/team/code-review"), raw
            )
            assert [c["uri"] for c in folder["resources"]] == [
                DOCS,
                "skill://docs/team/code-review/templates",
            ]


async def test_a_hostile_childs_skills_are_relayed_without_harm(tmp_path: Path) -> None:
    """A child whose skills answers are hostile (tests/client/servers/hostile_skills.py):
    what a host may not load is dropped, every URI is put in the child's namespace (a file
    claimed outside the skill stays in the child's), its endless directory is read to a
    bound, and what verifies still verifies through the gateway."""
    config = write_config(tmp_path, {"odd": stdio([PY, str(ODD)])})
    async with gateway(config) as client:
        raw = await client.request("skills/list", {})
        # Only the entries a host may load, each once: the child's pages repeat.
        entries = raw["skills"]
        assert [e["uri"] for e in entries] == [
            "skill://odd/good/SKILL.md",
            "skill://odd/bomb/SKILL.md",
            "skill://odd/liar/SKILL.md",
            "skill://odd/blob/SKILL.md",
        ]
        uris = [r["uri"] for e in entries for r in e["resources"]]
        assert all(uri.startswith("skill://odd/") for uri in uris), uris
        # skills/get answered for another skill than asked: an error, not that skill.
        with pytest.raises(McpError, match=r"no entry of skill://liar/SKILL\.md"):
            await client.request("skills/get", {"uri": "skill://odd/liar/SKILL.md"})
        skills = await client.list_skills(all_pages=True)
        assert [s.uri for s in skills] == [
            "skill://odd/good/SKILL.md",
            "skill://odd/bomb/SKILL.md",
            "skill://odd/liar/SKILL.md",
            "skill://odd/blob/SKILL.md",
        ]
        assert (await client.load_skill(skills[0])).text.startswith("---\nname: good")
        children = await client.read_directory("skill://odd/good")
        assert len(children) == 100  # the gateway's bound on a child's pages
        assert (await status(client))["odd"]["state"] == "ready"


@pytest.mark.interop
@pytest.mark.skipif(not CODEX.exists(), reason="the Codex CLI is not installed (scripts/setup.sh)")
async def test_the_real_codex_takes_servers_that_declare_skills(
    tmp_path: Path, config: Path
) -> None:
    """Codex 0.171 lists no skills, but it must still take a server whose initialize
    declares the extension, directly and through the gateway, and call its tools."""
    # required: Codex waits for each server before its first turn (else it may start without).
    toml = stdio_server_toml("docs", PY, [SKILLS_SERVER]) + "required = true\n"
    toml += stdio_server_toml("gw", PY, [CMD_MCP]) + "required = true\n"
    toml += f'env = {{ CODEX_MCP_WRAPPER_CONFIG = "{config}" }}\n'
    call = ToolCall("mcp__gw", "docs__ping", {})
    run = await run_codex(tmp_path / "home", toml, call=call)
    assert run.returncode == 0, run.output
    offered = run.model.offered_tools()
    assert "ping" in offered["mcp__docs"] and "docs__ping" in offered["mcp__gw"]
    [output] = run.model.tool_outputs()
    assert output[-1] == {"type": "input_text", "text": "pong"}, run.output
