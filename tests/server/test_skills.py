"""Skills served by the library (SEP-2640; specs/skills.md) over a real stdio subprocess, in
both eras: our client lists them page by page, gets one, loads it and reads its files
verified against the entry, and reads its folders; the official MCP SDK client (which has
no skills API) does the same with raw requests. ttlMs and cacheScope ride on skills/list
and skills/get in both revisions (the decision in specs/skills.md); a server without
skills answers method-not-found, and our client does not ask one."""

from __future__ import annotations

import hashlib
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest
from codex_mcp.client import Client, McpClientError, McpError, SkillVerificationError
from codex_mcp.core.jsonrpc import INVALID_PARAMS, METHOD_NOT_FOUND
from support.sdk_skills import sdk_requests

HERE = Path(__file__).resolve().parent
SERVER = str(HERE / "servers" / "skills_server.py")
PLAIN = str(HERE / "servers" / "library_server.py")
MODES = ["legacy", "2026-07-28"]
CODE_SKILL = "skill://team/code-review/SKILL.md"


@pytest.fixture
def skills_dir(tmp_path: Path) -> Path:
    root = tmp_path / "skills"
    pdf = root / "pdf-processing"
    (pdf / "templates" / "regional").mkdir(parents=True)
    (pdf / "SKILL.md").write_text(
        "---\nname: pdf-processing\ndescription: Extract PDFs\ncreated: 2024-01-02\n"
        "metadata:\n  version: '2'\n---\n\n# PDF\n"
    )
    (pdf / "templates" / "invoice.md").write_text("# Invoice\n")
    (pdf / "templates" / "regional" / "eu.md").write_text("# EU\n")
    (pdf / "logo.bin").write_bytes(bytes(range(256)))
    nested = pdf / "nested-helper"
    nested.mkdir()
    (nested / "SKILL.md").write_text("---\nname: nested-helper\ndescription: Inner\n---\nx\n")
    return root


def stdio(skills_dir: Path, mode: str) -> Client:
    return Client.stdio([sys.executable, SERVER, str(skills_dir)], mode=mode, timeout=60)


@pytest.mark.parametrize("mode", MODES)
async def test_our_client_lists_gets_loads_and_reads(skills_dir: Path, mode: str) -> None:
    async with stdio(skills_dir, mode) as client:
        assert client.skills_settings() == {"directoryRead": True}
        first = await client.list_skills()
        assert len(first) == 2 and first.next_cursor  # page size 2: three skills, two pages
        rest = await client.list_skills(first.next_cursor)
        every = await client.list_skills(all_pages=True)
        assert [s.uri for s in every] == [s.uri for s in [*first, *rest]]
        assert sorted(s.uri for s in every) == [
            "skill://pdf-processing/SKILL.md",
            "skill://pdf-processing/nested-helper/SKILL.md",
            CODE_SKILL,
        ]
        pdf = await client.get_skill("skill://pdf-processing/SKILL.md")
        # The frontmatter verbatim: a date stays the string written, metadata passes on.
        assert pdf.frontmatter == {
            "name": "pdf-processing",
            "description": "Extract PDFs",
            "created": "2024-01-02",
            "metadata": {"version": "2"},
        }
        # Complete: the nested skill's files are the enclosing skill's too.
        assert sorted(f.uri.removeprefix("skill://pdf-processing/") for f in pdf.files or ()) == [
            "SKILL.md",
            "logo.bin",
            "nested-helper/SKILL.md",
            "templates/invoice.md",
            "templates/regional/eu.md",
        ]
        loaded = await client.load_skill(pdf)
        assert loaded.text.endswith("# PDF\n")
        logo = await client.read_skill_file(loaded, "skill://pdf-processing/logo.bin")
        assert logo == bytes(range(256))  # a blob, verified against the entry
        listed = pdf.file("skill://pdf-processing/logo.bin")
        assert listed is not None
        assert listed.digest == "sha256:" + hashlib.sha256(logo).hexdigest()
        with pytest.raises(SkillVerificationError, match="not a file of"):
            await client.read_skill_file(loaded, "skill://pdf-processing/unlisted.md")
        root = await client.read_directory("skill://pdf-processing")
        assert [(c["uri"].rsplit("/", 1)[-1], c["mimeType"]) for c in root] == [
            ("SKILL.md", "text/markdown"),
            ("logo.bin", "application/octet-stream"),
            ("nested-helper", "inode/directory"),
            ("templates", "inode/directory"),
        ]
        regional = await client.read_directory("skill://pdf-processing/templates/regional")
        assert [c["name"] for c in regional] == ["eu.md"]
        code = await client.load_skill(CODE_SKILL)
        assert code.skill.frontmatter["license"] == "MIT"
        comment = await client.read_skill_file(
            code, "skill://team/code-review/templates/comment.md"
        )
        assert comment == b"**Finding**: ...\n"
        # The folders above a skill are directories too.
        assert [c["uri"] for c in await client.read_directory("skill://team")] == [
            "skill://team/code-review"
        ]


@pytest.mark.parametrize("mode", MODES)
async def test_cache_hints_ride_on_skills_results_in_both_revisions(
    skills_dir: Path, mode: str
) -> None:
    async with stdio(skills_dir, mode) as client:
        listed = await client.request("skills/list", {})
        got = await client.request("skills/get", {"uri": CODE_SKILL})
        directory = await client.request("resources/directory/read", {"uri": "skill://team"})
    for result in (listed, got, directory):  # the extension's schema requires them on all three
        assert (result["ttlMs"], result["cacheScope"]) == (60_000, "public")
    assert "nextCursor" not in got


@pytest.mark.parametrize("mode", MODES)
async def test_a_server_without_skills_is_not_asked(mode: str) -> None:
    async with Client.stdio([sys.executable, PLAIN], mode=mode, timeout=60) as client:
        assert client.skills_settings() is None
        with pytest.raises(McpClientError, match="does not declare the Skills extension"):
            await client.list_skills()
        with pytest.raises(McpClientError, match="does not declare"):
            await client.read_directory("skill://x")
        for method, params in [
            ("skills/list", {}),
            ("skills/get", {"uri": "skill://x/SKILL.md"}),
            ("resources/directory/read", {"uri": "skill://x"}),
        ]:
            with pytest.raises(McpError) as raised:
                await client.request(method, params)
            assert raised.value.code == METHOD_NOT_FOUND, method


# -- the official SDK client ----------------------------------------------------------------
@pytest.mark.parametrize("mode", MODES)
async def test_the_sdk_client_reads_a_skill(skills_dir: Path, mode: str) -> None:
    from mcp.client import Client as SdkClient
    from mcp.client.stdio import StdioServerParameters
    from mcp.shared.exceptions import MCPError

    list_skills, get_skill, read_directory, raw = sdk_requests()
    params = StdioServerParameters(command=sys.executable, args=[SERVER, str(skills_dir)])
    async with SdkClient(params, mode=mode) as sdk:
        with anyio.fail_after(60):
            if mode == "legacy":
                assert sdk.server_capabilities.extensions == {
                    "io.modelcontextprotocol/skills": {"directoryRead": True}
                }
            skills: list[dict[str, Any]] = []
            listing = await sdk.session.send_request(list_skills(), raw)
            skills += listing["skills"]
            assert (listing["ttlMs"], listing["cacheScope"]) == (60_000, "public")
            entry = (await sdk.session.send_request(get_skill(CODE_SKILL), raw))["skill"]
            assert entry in skills or listing.get("nextCursor")
            for file in entry["resources"]:
                content = (await sdk.read_resource(file["uri"])).contents[0]
                data = content.text.encode()  # type: ignore[union-attr]
                assert len(data) == file["size"]
                assert "sha256:" + hashlib.sha256(data).hexdigest() == file["digest"]
            children = await sdk.session.send_request(
                read_directory("skill://team/code-review"), raw
            )
            # SKILL.md is named after its skill (the extension asks it of the resource).
            assert [c["name"] for c in children["resources"]] == ["code-review", "templates"]
            with pytest.raises(MCPError) as raised:
                await sdk.session.send_request(get_skill("skill://nope/SKILL.md"), raw)
            assert raised.value.error.code == INVALID_PARAMS
