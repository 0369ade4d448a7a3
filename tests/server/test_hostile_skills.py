"""Hostile input to a server serving skills (SEP-2640; specs/skills.md), over a real stdio
subprocess in both eras: URIs that try to leave the skills (`..`, URL-encoded, absolute,
another scheme, a symbolic link pointing out), files too big or too many, frontmatter that
is not what the format requires (or a YAML alias bomb), a named pipe where a file should
be, and parameters of the wrong type. Nothing outside the skills is ever served, a bad
skill is left out with its reason on stderr while the good ones are served, every request
gets an answer (-32602 where the spec says so), and the server keeps serving."""

from __future__ import annotations

import os
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import pytest
from codex_mcp.client import Client, McpError
from codex_mcp.core.jsonrpc import INVALID_PARAMS
from codex_mcp.core.skills import MAX_RESOURCES_PER_SKILL, MAX_SKILL_BYTES

SERVER = str(Path(__file__).resolve().parent / "servers" / "skills_server.py")
SECRET = "the-secret-outside-the-skills"
GOOD = "skill://good/SKILL.md"


def skill_md(name: str, description: str = "A skill", extra: str = "") -> str:
    return f"---\nname: {name}\ndescription: {description}\n{extra}---\n\n# {name}\n"


def write(path: Path, text: str | bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text)


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    """skills/ with one good skill and every kind of bad one; outside/ beside it."""
    root = tmp_path / "skills"
    outside = tmp_path / "outside"
    write(outside / "secret.txt", SECRET)
    write(outside / "linked" / "SKILL.md", skill_md("linked", SECRET))
    write(root / "good" / "SKILL.md", skill_md("good"))
    write(root / "good" / "notes" / "a.md", "a note\n")
    (root / "good" / "leak.txt").symlink_to(outside / "secret.txt")
    (root / "good" / "notes" / "up").symlink_to(outside)
    (root / "linked").symlink_to(outside / "linked")  # a whole skill folder linked in
    os.mkfifo(root / "good" / "pipe")  # a reader that opened it would block forever
    write(root / "no-frontmatter" / "SKILL.md", "# just markdown\n")
    write(root / "not-yaml" / "SKILL.md", "---\nname: [unclosed\n---\n")
    write(root / "a-list" / "SKILL.md", "---\n- name\n- description\n---\n")
    write(root / "no-description" / "SKILL.md", "---\nname: no-description\n---\n")
    write(root / "wrong-folder" / "SKILL.md", skill_md("other-name"))
    write(root / "Bad_Name" / "SKILL.md", skill_md("Bad_Name"))
    write(root / "not-utf8" / "SKILL.md", b"---\nname: not-utf8\ndescription: \xff\xfe\n---\n")
    bomb = "a: &a [x, x, x, x, x, x, x, x, x, x]\n" + "".join(
        f"{c}: &{c} [*{p}, *{p}, *{p}, *{p}, *{p}, *{p}, *{p}, *{p}, *{p}, *{p}]\n"
        for p, c in zip("abcdefgh", "bcdefghi", strict=True)
    )
    write(root / "bomb" / "SKILL.md", f"---\nname: bomb\ndescription: d\n{bomb}---\n")
    deep = "x: " + "[" * 60 + "]" * 60 + "\n"
    write(root / "deep" / "SKILL.md", f"---\nname: deep\ndescription: d\n{deep}---\n")
    write(root / "huge" / "SKILL.md", skill_md("huge"))
    with (root / "huge" / "big.bin").open("wb") as big:
        big.truncate(MAX_SKILL_BYTES + 1)  # sparse: no disk, but over the limit when read
    write(root / "many" / "SKILL.md", skill_md("many"))
    for index in range(MAX_RESOURCES_PER_SKILL):
        write(root / "many" / "files" / f"{index}.md", "x")
    return root


@asynccontextmanager
async def serving(tree: Path, errlog: Path, mode: str) -> AsyncIterator[Client]:
    with errlog.open("w") as err:
        async with Client.stdio(
            [sys.executable, SERVER, str(tree)], errlog=err, mode=mode, timeout=60
        ) as client:
            yield client


async def invalid(client: Client, method: str, params: object) -> McpError:
    with pytest.raises(McpError) as raised:
        await client.request(method, params)  # type: ignore[arg-type]
    assert raised.value.code == INVALID_PARAMS, (method, params, raised.value)
    return raised.value


MODES = ["legacy", "2026-07-28"]


@pytest.mark.parametrize("mode", MODES)
async def test_only_the_good_skills_are_served(tree: Path, tmp_path: Path, mode: str) -> None:
    errlog = tmp_path / "stderr.log"
    async with serving(tree, errlog, mode) as client:
        skills = await client.list_skills(all_pages=True)
        assert sorted(s.uri for s in skills) == [GOOD, "skill://team/code-review/SKILL.md"]
        good = next(s for s in skills if s.uri == GOOD)
        # The symbolic links and the pipe are no files of the skill.
        assert [f.uri for f in good.files or ()] == [GOOD, "skill://good/notes/a.md"]
        listed = await client.list_resources(all_pages=True)
        assert all(SECRET not in str(r.raw) for r in listed)
        assert not any("linked" in r.uri or "leak" in r.uri for r in listed)
    log = errlog.read_text()
    for folder, reason in [
        ("no-frontmatter", "does not begin with a --- delimited frontmatter block"),
        ("not-yaml", "the frontmatter is not YAML"),
        ("a-list", "the frontmatter is not a mapping"),
        ("no-description", "no non-empty string 'description'"),
        ("wrong-folder", "its folder 'wrong-folder' is not its name 'other-name'"),
        ("Bad_Name", "breaks the naming rules"),
        ("not-utf8", "its SKILL.md is not UTF-8"),
        ("bomb", "holds more than 10000 values"),
        ("deep", "nests deeper than"),
        ("huge", f"its files hold over {MAX_SKILL_BYTES} bytes"),
        ("many", f"over {MAX_RESOURCES_PER_SKILL} files"),
    ]:
        assert any(folder in line and reason in line for line in log.splitlines()), (folder, log)
    assert "leak.txt: skipped: a symbolic link" in log
    assert "Traceback" not in log


@pytest.mark.parametrize("mode", MODES)
async def test_no_uri_reaches_outside_the_skills(tree: Path, tmp_path: Path, mode: str) -> None:
    outside = tree.parent / "outside"
    escapes = [
        "skill://good/../outside/secret.txt",
        "skill://good/%2e%2e/%2e%2e/outside/secret.txt",
        "skill://good/notes/../../../outside/secret.txt",
        "skill://good/leak.txt",
        "skill://good/notes/up/secret.txt",
        "skill://good/pipe",
        "skill://linked/SKILL.md",
        f"skill://{outside}/secret.txt",
        f"skill:///{outside}/secret.txt",
        f"file://{outside}/secret.txt",
        f"{outside}/secret.txt",
        "skill://good/notes%2f..%2f..%2f..%2foutside/secret.txt",
        "skill://good\\..\\..\\outside\\secret.txt",
        "skill://good/SKILL.md\x00../../outside/secret.txt",
    ]
    errlog = tmp_path / "stderr.log"
    async with serving(tree, errlog, mode) as client:
        for uri in escapes:
            for method in ("resources/read", "skills/get", "resources/directory/read"):
                error = await invalid(client, method, {"uri": uri})
                assert SECRET not in str(error.data) + error.message
        # A file is no directory, a folder no file, and a folder no skill.
        await invalid(client, "resources/directory/read", {"uri": GOOD})
        await invalid(client, "resources/read", {"uri": "skill://good/notes"})
        await invalid(client, "skills/get", {"uri": "skill://good"})
        await invalid(client, "skills/get", {"uri": "skill://good/notes/a.md"})
        # Still serving.
        loaded = await client.load_skill(GOOD)
        assert loaded.skill.name == "good"
    assert "Traceback" not in errlog.read_text()


@pytest.mark.parametrize("mode", MODES)
async def test_wrong_parameter_types_are_invalid_params(
    tree: Path, tmp_path: Path, mode: str
) -> None:
    errlog = tmp_path / "stderr.log"
    async with serving(tree, errlog, mode) as client:
        for uri in (None, 5, ["skill://good/SKILL.md"], {"uri": GOOD}, True):
            await invalid(client, "skills/get", {"uri": uri})
            await invalid(client, "resources/directory/read", {"uri": uri})
        await invalid(client, "skills/get", {})
        await invalid(client, "resources/directory/read", {})
        for cursor in (5, {"x": 1}, "not-a-cursor", "LTE="):  # "LTE=" is base64 of -1
            await invalid(
                client, "resources/directory/read", {"uri": "skill://good", "cursor": cursor}
            )
            await invalid(client, "skills/list", {"cursor": cursor})
        assert (await client.get_skill(GOOD)).uri == GOOD
    assert "Traceback" not in errlog.read_text()


async def test_a_skills_directory_that_is_a_link_or_missing_serves_no_skill_from_it(
    tmp_path: Path,
) -> None:
    """The skills directory itself may not be a symbolic link, and a missing one starts
    the server with the skills defined in code only."""
    real = tmp_path / "real"
    write(real / "good" / "SKILL.md", skill_md("good"))
    linked = tmp_path / "linked"
    linked.symlink_to(real)
    for root, reason in [(linked, "is not a directory"), (tmp_path / "none", "cannot be read")]:
        errlog = tmp_path / "stderr.log"
        async with serving(root, errlog, "legacy") as client:
            skills = await client.list_skills(all_pages=True)
            assert [s.uri for s in skills] == ["skill://team/code-review/SKILL.md"]
        assert reason in errlog.read_text()


def test_no_more_is_read_than_all_skills_may_hold(tmp_path: Path) -> None:
    """Ten skills of 4 MiB each and a server that keeps 6 MiB: one is served, the others
    are left out saying why, and loading them never holds much more than the bound (each
    file is read to the bytes left, not whole)."""
    import asyncio
    import tracemalloc

    from codex_mcp.server.skills import SkillProvider

    for index in range(10):
        folder = tmp_path / f"big-{index}"
        write(folder / "SKILL.md", skill_md(f"big-{index}"))
        with (folder / "data.bin").open("wb") as data:
            data.truncate(4 * 1024 * 1024)
    provider = SkillProvider(max_total_bytes=6 * 1024 * 1024)
    provider.add_directory(tmp_path)
    tracemalloc.start()
    try:
        asyncio.run(provider.start())
        _current, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 16 * 1024 * 1024, peak  # ten whole files would be 40 MiB
    served = asyncio.run(provider.list_skills(None))  # type: ignore[arg-type]
    assert len(served) == 1
    left_out = [p for p in provider.problems if "would hold more than the server keeps" in p]
    assert len(left_out) == 9, provider.problems


def test_a_skill_in_code_cannot_name_a_path_outside_itself() -> None:
    """Paths given in code are held to the same rules: a file or prefix that climbs out,
    is absolute or empty leaves the skill out, and nothing of it is served."""
    import asyncio

    from codex_mcp.server.skills import SkillProvider

    provider = SkillProvider()
    provider.add_skill("ok", "fine", "body", files={"notes/a.md": "a"})
    provider.add_skill("climb", "d", "body", files={"../../etc/passwd": "x"})
    provider.add_skill("absolute", "d", "body", files={"/etc/passwd": "x"})
    provider.add_skill("empty-part", "d", "body", files={"notes//a.md": "x"})
    provider.add_skill("prefixed", "d", "body", prefix="../..")
    provider.add_skill("Bad Name", "d", "body")
    asyncio.run(provider.start())
    served = asyncio.run(provider.list_skills(None))  # type: ignore[arg-type]
    assert [s["uri"] for s in served] == ["skill://ok/SKILL.md"]
    assert len(provider.problems) == 5, provider.problems
    resources = asyncio.run(provider.list_resources(None))  # type: ignore[arg-type]
    assert [r["uri"] for r in resources] == ["skill://ok/SKILL.md", "skill://ok/notes/a.md"]
