"""Skills from the client's side (SEP-2640; specs/skills.md): list and get skill entries,
read a skill's directories, and load a skill, its SKILL.md and supporting files verified
against the entry (size, digest, frontmatter) before any byte is handed back. Client
inherits SkillFeatures.

Nothing is fetched ahead of need: listing reads no file; `load_skill` reads SKILL.md;
`read_skill_file` reads one supporting file, and only one the held entry lists."""

from __future__ import annotations

import base64
import binascii
from dataclasses import dataclass
from typing import Any

from codex_mcp.core.jsonrpc import JsonObject
from codex_mcp.core.skills import (
    DIRECTORY_MIME,
    SKILLS_EXTENSION,
    BadFrontmatter,
    digest,
    parse_frontmatter,
    skill_name_of,
)

from .errors import McpClientError
from .paging import listing, page_of
from .session import ClientSession
from .types import Page

#: Seconds a skills request may take.
SKILL_REQUEST_TIMEOUT = 30.0


class SkillVerificationError(McpClientError):
    """What a server sent for a skill is not what its entry describes (a digest, size or
    frontmatter mismatch, a file the entry does not list, or an entry that is invalid):
    the content is not used."""


@dataclass(frozen=True, slots=True)
class SkillFile:
    uri: str
    digest: str
    size: int


@dataclass(frozen=True, slots=True)
class Skill:
    """A skill entry: the URI of its SKILL.md, its frontmatter, and its files (None when
    the server publishes them as "dynamic": no digests to verify against)."""

    uri: str
    frontmatter: JsonObject
    files: tuple[SkillFile, ...] | None
    raw: JsonObject

    @property
    def name(self) -> str:
        return str(self.frontmatter["name"])

    @property
    def description(self) -> str:
        return str(self.frontmatter["description"])

    @property
    def root(self) -> str:
        """The skill's folder: its directory resource."""
        return self.uri.rsplit("/", 1)[0]

    @classmethod
    def from_json(cls, data: Any) -> Skill:
        """An entry, checked as the extension requires of one a host may load."""
        if not isinstance(data, dict):
            raise SkillVerificationError("a skill entry is not an object")
        uri, frontmatter, resources = (
            data.get("uri"),
            data.get("frontmatter"),
            data.get("resources"),
        )
        if not isinstance(uri, str) or skill_name_of(uri) is None:
            raise SkillVerificationError(f"skill entry uri {uri!r} is not the URI of a SKILL.md")
        if not isinstance(frontmatter, dict) or not all(
            isinstance(frontmatter.get(key), str) and frontmatter[key]
            for key in ("name", "description")
        ):
            raise SkillVerificationError(
                f"{uri}: the entry's frontmatter lacks name or description"
            )
        if frontmatter["name"] != skill_name_of(uri):
            raise SkillVerificationError(f"{uri}: the entry's name is not its folder's")
        if resources == "dynamic":
            return cls(uri, frontmatter, None, data)
        if not isinstance(resources, list):
            raise SkillVerificationError(
                f"{uri}: the entry's resources are neither a list nor dynamic"
            )
        root = uri.rsplit("/", 1)[0] + "/"
        files = []
        for item in resources:
            if not (
                isinstance(item, dict)
                and isinstance(item.get("uri"), str)
                and item["uri"].startswith(root)
                and isinstance(item.get("digest"), str)
                and isinstance(item.get("size"), int)
                and not isinstance(item.get("size"), bool)
                and item["size"] >= 0
            ):
                raise SkillVerificationError(f"{uri}: a resource of the entry is invalid: {item!r}")
            files.append(SkillFile(item["uri"], item["digest"], item["size"]))
        if not any(file.uri == uri for file in files):
            raise SkillVerificationError(f"{uri}: the entry does not list its own SKILL.md")
        return cls(uri, frontmatter, tuple(files), data)

    def file(self, uri: str) -> SkillFile | None:
        return next((file for file in self.files or () if file.uri == uri), None)


@dataclass(frozen=True, slots=True)
class LoadedSkill:
    """A skill whose SKILL.md was read and verified against `skill`, the entry held."""

    skill: Skill
    text: str


class SkillFeatures:
    session: ClientSession

    def skills_settings(self) -> JsonObject | None:
        """The server's Skills extension settings, or None when it declares none (or
        the client is not connected)."""
        init = self.session.init_result
        extensions = init.capabilities.get("extensions") if init is not None else None
        settings = extensions.get(SKILLS_EXTENSION) if isinstance(extensions, dict) else None
        return settings if isinstance(settings, dict) else None

    def _require_skills(self, directory: bool = False) -> None:
        settings = self.skills_settings()
        if settings is None:
            raise McpClientError("the server does not declare the Skills extension")
        if directory and settings.get("directoryRead") is not True:
            raise McpClientError("the server does not declare directoryRead")

    async def list_skills(
        self, cursor: str | None = None, *, all_pages: bool = False
    ) -> Page[Skill]:
        """skills/list: one page from `cursor`, or every page. An invalid entry is left
        out of the page (it may not be loaded), and a skill listed twice is kept once;
        `raw` keeps what the server sent (the last page's)."""
        self._require_skills()
        page = await listing(
            self.session,
            "skills/list",
            "skills",
            cursor,
            SKILL_REQUEST_TIMEOUT,
            all_pages=all_pages,
        )
        skills: list[Skill] = []
        seen: set[str] = set()
        for item in page:
            try:
                skill = Skill.from_json(item)
            except SkillVerificationError:
                continue
            if skill.uri not in seen:  # a page repeated (a cursor leading back): once
                seen.add(skill.uri)
                skills.append(skill)
        return Page(skills, page.next_cursor, page.raw)

    async def skill_descriptions(self) -> dict[str, str]:
        """The `<skill-path>`s of the skills the server lists (`team/code-review`), each
        with its description (what a host shows its model); none when it declares no skills
        or its listing fails: for reports (doctor, lint) that show skills."""
        if self.skills_settings() is None:
            return {}
        try:
            listed = await self.list_skills(all_pages=True)
        except Exception:  # a broken skills/list: no skills shown, the report goes on
            return {}
        return {
            skill.uri.partition("://")[2].removesuffix("/SKILL.md"): skill.description
            for skill in listed
        }

    async def get_skill(self, uri: str) -> Skill:
        """skills/get: the entry of the skill whose SKILL.md is at `uri`."""
        self._require_skills()
        raw = await self.session.request("skills/get", {"uri": uri}, timeout=SKILL_REQUEST_TIMEOUT)
        skill = Skill.from_json(raw.get("skill"))
        if skill.uri != uri:
            raise SkillVerificationError(f"skills/get of {uri} answered for {skill.uri}")
        return skill

    async def read_directory(self, uri: str, *, all_pages: bool = True) -> Page[JsonObject]:
        """resources/directory/read: the direct children (Resource objects; a folder's
        mimeType is inode/directory) of a directory resource."""
        self._require_skills(directory=True)
        children: list[JsonObject] = []
        cursor: str | None = None
        seen: set[str] = set()
        while True:
            params: JsonObject = {"uri": uri}
            if cursor:
                params["cursor"] = cursor
            raw = await self.session.request(
                "resources/directory/read", params, timeout=SKILL_REQUEST_TIMEOUT
            )
            page = page_of(raw, "resources")
            children.extend(page)
            cursor = page.next_cursor
            if not all_pages or not cursor or cursor in seen or len(seen) >= 1000:
                return Page(children, cursor if not all_pages else None, raw)
            seen.add(cursor)

    async def load_skill(self, skill: Skill | str) -> LoadedSkill:
        """Read a skill's SKILL.md and verify it against the entry held (`skill`, or the
        entry skills/get answers for a URI): its size and digest (unless the skill is
        dynamic), and its frontmatter, field by field. SkillVerificationError on any
        difference: the content is then not returned."""
        entry = skill if isinstance(skill, Skill) else await self.get_skill(skill)
        data = await self._read_verified(entry, entry.uri)
        try:
            text = data.decode("utf-8")
            frontmatter = parse_frontmatter(text)
        except (UnicodeDecodeError, BadFrontmatter) as exc:
            raise SkillVerificationError(f"{entry.uri}: {exc}") from None
        if frontmatter != entry.frontmatter:
            changed = sorted(
                key
                for key in {*frontmatter, *entry.frontmatter}
                if frontmatter.get(key) != entry.frontmatter.get(key)
            )
            raise SkillVerificationError(
                f"{entry.uri}: its frontmatter differs from the entry's in {', '.join(changed)}"
            )
        return LoadedSkill(entry, text)

    async def read_skill_file(self, loaded: LoadedSkill, uri: str) -> bytes:
        """One supporting file of a loaded skill, verified against the entry held; a file
        the entry does not list is refused (unless the skill is dynamic)."""
        return await self._read_verified(loaded.skill, uri)

    async def _read_verified(self, skill: Skill, uri: str) -> bytes:
        listed = skill.file(uri)
        if skill.files is not None and listed is None:
            raise SkillVerificationError(f"{uri} is not a file of {skill.uri} as its entry lists")
        raw = await self.session.request(
            "resources/read", {"uri": uri}, timeout=SKILL_REQUEST_TIMEOUT
        )
        data = _content_bytes(raw, uri)
        if listed is not None:
            if len(data) != listed.size:
                raise SkillVerificationError(
                    f"{uri}: {len(data)} bytes where the entry says {listed.size}"
                )
            if digest(data) != listed.digest:
                raise SkillVerificationError(f"{uri}: its digest is not the entry's")
        return data


def _content_bytes(raw: JsonObject, uri: str) -> bytes:
    contents = raw.get("contents")
    for item in contents if isinstance(contents, list) else ():
        if not isinstance(item, dict) or item.get("uri") not in (uri, None):
            continue
        if isinstance(item.get("text"), str):
            return str(item["text"]).encode("utf-8")
        if isinstance(item.get("blob"), str):
            try:
                return base64.b64decode(item["blob"], validate=True)
            except (binascii.Error, ValueError):
                raise SkillVerificationError(f"{uri}: its blob is not base64") from None
    raise SkillVerificationError(f"{uri}: the server returned no content for it")


__all__ = [
    "DIRECTORY_MIME",
    "LoadedSkill",
    "Skill",
    "SkillFeatures",
    "SkillFile",
    "SkillVerificationError",
]
