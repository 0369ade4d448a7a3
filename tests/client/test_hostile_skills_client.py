"""Our client against a server whose skills answers are hostile (tests/client/servers/
hostile_skills.py, a real stdio process): invalid entries are left out of a listing (a host
must not load them), a cursor that repeats ends the paging, a directory whose pages never
end is read to a bound, and nothing whose size, digest, frontmatter or uri is not what the
entry held is ever returned: each is a SkillVerificationError, and the client goes on."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from codex_mcp.client import Client, SkillVerificationError

SERVER = [sys.executable, str(Path(__file__).resolve().parent / "servers" / "hostile_skills.py")]


async def test_only_what_verifies_is_used() -> None:
    async with Client.stdio(SERVER, timeout=30) as client:
        skills = await client.list_skills(all_pages=True)
        # Only the entries a host may load: every other one was invalid.
        assert [s.uri for s in skills] == [
            "skill://good/SKILL.md",
            "skill://bomb/SKILL.md",
            "skill://liar/SKILL.md",
            "skill://blob/SKILL.md",
        ]
        assert skills.next_cursor is None and len(skills.raw["skills"]) == 14
        good, bomb, liar, blob = skills
        loaded = await client.load_skill(good)
        assert loaded.text.startswith("---\nname: good")
        with pytest.raises(SkillVerificationError, match="more than 10000 values"):
            await client.load_skill(bomb)  # its digest is honest; its frontmatter a bomb
        with pytest.raises(SkillVerificationError, match="bytes where the entry says 5"):
            await client.load_skill(liar)
        with pytest.raises(SkillVerificationError, match="not base64"):
            await client.load_skill(blob)
        with pytest.raises(SkillVerificationError, match="no content"):
            await client.read_skill_file(loaded, "skill://good/notes.md")  # for another uri
        with pytest.raises(SkillVerificationError, match="not a file of"):
            await client.read_skill_file(loaded, "skill://good/../bomb/SKILL.md")
        with pytest.raises(SkillVerificationError, match=r"answered for skill://good/SKILL\.md"):
            await client.get_skill("skill://liar/SKILL.md")
        children = await client.read_directory("skill://good")
        assert len(children) == 1001 and children.next_cursor is None  # bounded, not endless
        assert (await client.load_skill(good)).skill == good  # still talking
