"""The skills the gateway serves, made ready for Codex's skills folder (specs/trust.md,
"Skills into Codex"): each skill the policy lets a client list, pinned in the trust lock like
a tool (a changed one waits for `codex-mcp trust`), read through the client, which verifies
every byte against the digests listed, and checked before anything is written: its path and
every file's made of plain names (no `..`, no absolute path, no control character), its
files counted and sized, its name in Codex's list its server's own."""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Final

from codex_mcp.client.skills import Skill, SkillFeatures, SkillVerificationError
from codex_mcp.core.log_names import printable
from codex_mcp.core.skills import MAX_RESOURCES_PER_SKILL, MAX_SKILL_BYTES, SKILL_FILE
from codex_mcp.gateway.config.model import GatewayConfig
from codex_mcp.gateway.routing.naming import sanitize_name

from .codex_skills import CODEX_NAME_CHARS, Bundle
from .lock import LockState, skill_pin
from .pinning import WITHHELD, Seen, Verdict, judge, reason

#: Every skill written in one sync, together (the server library's own bound for one server).
MAX_TOTAL_BYTES: Final = 64 * 1024 * 1024
MAX_SKILLS: Final = 1000
#: A file's path inside its skill: this many folders at most, names of at most 255 bytes.
MAX_FILE_DEPTH: Final = 16
_SEGMENT = re.compile(r"[^\x00-\x1f\x7f/\\]{1,255}")
_SKILL_SEGMENT = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")
_FOLDER_CHARS = re.compile(r"[^A-Za-z0-9_-]")
_FRONTMATTER_END = re.compile(r"^---[ \t]*\r?$", re.MULTILINE)


@dataclass(slots=True)
class Gathered:
    bundles: list[Bundle] = field(default_factory=list)
    #: Skills seen and not written, with why (withheld, unsafe, too large...).
    skipped: list[str] = field(default_factory=list)
    #: What was judged, for the lock (first uses to pin, changes to keep pending).
    judged: list[tuple[Seen, Verdict]] = field(default_factory=list)
    #: Folders of withheld skills: their trusted version stays in Codex's folder.
    keep: set[str] = field(default_factory=set)


def skill_path(uri: str) -> str:
    """A SKILL.md URI's skill path (`skill://a/b/SKILL.md`: `a/b`)."""
    return uri.partition("://")[2].removesuffix(f"/{SKILL_FILE}")


def locator(config: GatewayConfig, up: set[str]) -> Locate:
    """(server, skill path) of a SKILL.md URI the gateway serves, for the servers in `up`:
    the gateway's namespace is its first segment (a passthrough serves the child's own)."""
    by_namespace = {sanitize_name(server.name): server.name for server in config.servers}

    def locate(uri: str) -> tuple[str, str] | None:
        rest = skill_path(uri)
        if config.passthrough:
            server = config.servers[0].name if config.servers else None
            return (server, rest) if server in up else None
        namespace, _, path = rest.partition("/")
        server = by_namespace.get(namespace)
        return (server, path) if server in up and path else None

    return locate


def codex_name(server: str, path: str) -> str:
    """`server:skill` (`server:prefix:skill` for a skill under a prefix), at most 64
    characters (a longer one ends with a hash of the whole)."""
    name = ":".join([sanitize_name(server), *path.split("/")])
    if len(name) <= CODEX_NAME_CHARS:
        return name
    digest = hashlib.sha256(f"{server}\0{path}".encode()).hexdigest()[:12]
    return f"{name[: CODEX_NAME_CHARS - 13]}-{digest}"


def folder_name(server: str, path: str, taken: set[str]) -> str:
    """`server.skill` (`server.prefix.skill`), plain characters only, unique in the sync."""
    folder = ".".join(_FOLDER_CHARS.sub("_", part) for part in [server, *path.split("/")])
    if len(folder) > 100 or folder in taken:
        digest = hashlib.sha256(f"{server}\0{path}".encode()).hexdigest()[:8]
        folder = f"{folder[:90]}-{digest}"
    taken.add(folder)
    return folder


def unsafe_path(path: str, file: bool) -> str | None:
    """Why a skill's path (or a file's path in it) cannot be written, or None."""
    parts = path.split("/")
    if len(parts) > MAX_FILE_DEPTH:
        return f"{len(parts)} levels deep"
    for part in parts:
        if part in ("", ".", ".."):
            return "it has an empty, . or .. segment"
        if file and (not _SEGMENT.fullmatch(part) or len(part.encode()) > 255):
            return "a name holds a control character, a backslash or over 255 bytes"
        if not file and not _SKILL_SEGMENT.fullmatch(part):
            return "a segment is not a plain name (letters, digits, . _ -)"
    return None


def for_codex(text: str, name: str, source: str, frontmatter: Mapping[str, object]) -> bytes:
    """The SKILL.md Codex reads: the frontmatter written again with Codex's name for it
    (every value as JSON, which is YAML too, escaped to ASCII: no line break hides in a
    value), then the body as served."""
    found = _FRONTMATTER_END.search(text, text.index("\n") + 1 if "\n" in text else len(text))
    body = text[found.end() :].removeprefix("\n") if found else ""
    lines = [
        "---",
        f"# Written by `codex-mcp skills sync` from {json.dumps(source)}: a sync replaces it.",
        f"name: {json.dumps(name)}",
    ]
    lines += [
        f"{json.dumps(key)}: {json.dumps(value)}"
        for key, value in frontmatter.items()
        if key != "name"
    ]
    return ("\n".join([*lines, "---", body])).encode()


#: A SKILL.md URI -> (server, skill path), None: not one to write.
Locate = Callable[[str], tuple[str, str] | None]
#: Whether the policy lets a SKILL.md URI be listed.
Allowed = Callable[[str], Awaitable[bool]]


@dataclass(frozen=True, slots=True)
class Source:
    """Where skills are read: a client of the gateway (URIs in its servers' namespaces),
    or one child's own session (its own URIs), with what a SKILL.md URI is (its server and
    skill path; None: not one to write) and whether the policy lets it be listed."""

    client: SkillFeatures
    locate: Locate
    allowed: Allowed | None = None


async def gather(sources: list[Source], config: GatewayConfig, state: LockState) -> Gathered:
    """The skills of `sources`, judged against the lock and read whole (each verified)."""
    gathered = Gathered()
    taken: set[str] = set()
    total = 0
    for source in sources:
        declared = source.client.skills_settings() is not None
        listed = (await source.client.list_skills(all_pages=True)).items if declared else []
        for skill in listed[:MAX_SKILLS]:
            place = source.locate(skill.uri)
            if place is None or (
                source.allowed is not None and not await source.allowed(skill.uri)
            ):
                continue
            total += await _one(source, skill, place, config, state, gathered, taken)
            if total > MAX_TOTAL_BYTES:
                gathered.skipped.append(
                    f"stopped: the skills together are over {MAX_TOTAL_BYTES} bytes"
                )
                gathered.bundles.pop()
                return gathered
        if len(listed) > MAX_SKILLS:
            gathered.skipped.append(
                f"skipped {len(listed) - MAX_SKILLS} skill(s) over the first {MAX_SKILLS}"
            )
    return gathered


async def _one(
    source: Source,
    skill: Skill,
    place: tuple[str, str],
    config: GatewayConfig,
    state: LockState,
    gathered: Gathered,
    taken: set[str],
) -> int:
    """Judge one skill and read it into `gathered`; the bytes it adds."""
    server, path = place
    shown = printable(skill.uri, 200)
    problem = unsafe_path(path, file=False) or _bounds(skill)
    if problem is not None:
        gathered.skipped.append(f"skipped {shown}: {problem}")
        return 0
    folder = folder_name(server, path, taken)
    seen = Seen(server, "skills", path, skill_pin(path, skill.raw))
    server_config = config.server(server)
    verdict = judge(
        state, config.pinning_of(server_config) if server_config else config.pinning, seen
    )
    gathered.judged.append((seen, verdict))
    if verdict in WITHHELD:
        gathered.keep.add(folder)
        gathered.skipped.append(
            f"withheld {seen.handle}: {reason(state, seen, verdict)}; run `codex-mcp trust`"
        )
        return 0
    try:
        files = await _read(source.client, skill)
    except SkillVerificationError as error:
        gathered.skipped.append(f"skipped {shown}: {printable(error, 300)}")
        return 0
    name = codex_name(server, path)
    files[SKILL_FILE] = for_codex(
        files[SKILL_FILE].decode("utf-8"), name, skill.uri, skill.frontmatter
    )
    gathered.bundles.append(Bundle(server, path, name, folder, seen.pin.digest, files))
    return sum(len(data) for data in files.values())


def _bounds(skill: Skill) -> str | None:
    """Why the entry itself rules the skill out, before any byte of it is read."""
    if skill.files is None:
        return "its files are dynamic: there is no digest to pin or verify"
    if len(skill.files) > MAX_RESOURCES_PER_SKILL:
        return f"{len(skill.files)} files, over {MAX_RESOURCES_PER_SKILL}"
    if sum(file.size for file in skill.files) > MAX_SKILL_BYTES:
        return f"over {MAX_SKILL_BYTES} bytes"
    root = skill.root + "/"
    for file in skill.files:
        problem = unsafe_path(file.uri.removeprefix(root), file=True)
        if problem is not None:
            return f"the file {printable(file.uri, 200)}: {problem}"
    return None


async def _read(client: SkillFeatures, skill: Skill) -> dict[str, bytes]:
    """Every file of the skill, each verified against the entry (size, digest); a nested
    skill's SKILL.md is left out (it is a skill of its own, written on its own)."""
    loaded = await client.load_skill(skill)
    root = skill.root + "/"
    files = {SKILL_FILE: loaded.text.encode()}
    for file in skill.files or ():
        rel = file.uri.removeprefix(root)
        if rel == SKILL_FILE or rel.endswith(f"/{SKILL_FILE}"):
            continue
        files[rel] = await client.read_skill_file(loaded, file.uri)
    return files
